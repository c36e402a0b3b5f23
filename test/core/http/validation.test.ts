import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { compileAllValidators, MAX_JSON_DEPTH, validatorCompiler } from '../../../core/http/validation.js';
import { buildAllSerializers, serializerCompiler } from '../../../core/http/serialization.js';

// database-independent: schema compilation and validation, before any handler.

// Validators compile on a route's first request; this compiles every one the full gateway
// makes, so a schema Ajv rejects fails here rather than on some route's first call.
t.test('every route schema of the gateway compiles', async (t) => {
  await makeApp(t);
  const n = compileAllValidators();
  t.ok(n > 50, `compiled ${n} validators`);
  const s = buildAllSerializers();
  t.ok(s > 50, `built ${s} response serializers`);
});

t.test('a lazy serializer is built on its first use and writes what the schema says', async (t) => {
  const s = serializerCompiler({
    schema: { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' } }, required: ['n'] },
  });
  t.equal(s({ n: 1, s: 'x', extra: true }), '{"n":1,"s":"x"}', "only the schema's fields");
  t.equal(s({ n: 2 }), '{"n":2}');
  const bad = serializerCompiler({ schema: { type: 'object', properties: { n: { $ref: '#/definitions/missing' } } } });
  t.throws(() => bad({ n: 1 }));
});

t.test('a lazy validator validates, reports errors, and a bad schema throws on first use', async (t) => {
  const v = validatorCompiler({
    schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    httpPart: 'body',
    method: 'POST',
    url: '/x',
  }) as any;
  t.equal(v({ n: 1 }), true);
  t.equal(v({ n: 'x' }), false);
  t.equal(v.errors[0].instancePath, '/n');
  t.equal(v({ n: 2 }), true);
  t.equal(v.errors, null);
  const bad = validatorCompiler({
    schema: { type: 'object', properties: { n: { type: 'nonsense' } } },
    httpPart: 'body',
    method: 'POST',
    url: '/y',
  }) as any;
  t.throws(() => bad({}));
});

/** `{"a":{"a":…}}` nested `levels` deep (the outer object is level 1). */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
}

t.test(`a JSON body nesting more than ${MAX_JSON_DEPTH} levels is a 400 naming the limit, never a 500`, async (t) => {
  const v = validatorCompiler({ schema: { type: 'object' }, httpPart: 'body', method: 'POST', url: '/z' }) as any;
  t.equal(v({ x: nested(MAX_JSON_DEPTH - 1) }), true, 'up to the limit is fine');
  t.equal(v({ x: nested(MAX_JSON_DEPTH) }), false);
  t.match(v.errors[0], { instancePath: '/x', keyword: 'maxDepth', params: { limit: MAX_JSON_DEPTH } });
  t.equal(v([[nested(200_000)]]), false, 'walked without recursion: no stack overflow here');

  const oa = await openAiFake().start('/v1');
  t.teardown(() => oa.close());
  const { app } = await makeApp(t, {
    vendors: [{ id: 'oa', use: 'openai', config: { api_key: 'sk-oa', base_url: oa.url, models: ['gpt-4o-mini'] } }],
  });
  const { auth } = await activate(app);
  // As text: JSON.stringify itself overflows on such a value (that was the 500).
  const deep = `${'{"a":'.repeat(100_000)}{}${'}'.repeat(100_000)}`;
  const native = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: `{"messages":"hi","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${deep}}}}`,
  });
  t.equal(native.statusCode, 400, native.body.slice(0, 300));
  t.match(native.json().error, {
    code: 'validation_failed',
    param: 'response_format',
    message: new RegExp(`more than ${MAX_JSON_DEPTH} levels`),
  });
  t.ok(native.headers['x-request-id']);
  const compat = await app.inject({
    method: 'POST',
    url: '/v1/openai/chat/completions',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`,
  });
  t.equal(compat.statusCode, 400, compat.body.slice(0, 300));
  t.match(compat.json().error, { code: 'validation_failed', param: 'tools', message: /64 levels/ });
  t.equal(oa.requests.length, 0, 'nothing was sent to a vendor');
});
