import t from 'tap';
import { makeApp } from '../../helpers/app.js';
import { compileAllValidators, validatorCompiler } from '../../../core/http/validation.js';
import { buildAllSerializers, serializerCompiler } from '../../../core/http/serialization.js';

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
  const s = serializerCompiler({ schema: { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' } }, required: ['n'] } });
  t.equal(s({ n: 1, s: 'x', extra: true }), '{"n":1,"s":"x"}', 'only the schema\'s fields');
  t.equal(s({ n: 2 }), '{"n":2}');
  const bad = serializerCompiler({ schema: { type: 'object', properties: { n: { $ref: '#/definitions/missing' } } } });
  t.throws(() => bad({ n: 1 }));
});

t.test('a lazy validator validates, reports errors, and a bad schema throws on first use', async (t) => {
  const v = validatorCompiler({ schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, httpPart: 'body', method: 'POST', url: '/x' }) as any;
  t.equal(v({ n: 1 }), true);
  t.equal(v({ n: 'x' }), false);
  t.equal(v.errors[0].instancePath, '/n');
  t.equal(v({ n: 2 }), true);
  t.equal(v.errors, null);
  const bad = validatorCompiler({ schema: { type: 'object', properties: { n: { type: 'nonsense' } } }, httpPart: 'body', method: 'POST', url: '/y' }) as any;
  t.throws(() => bad({}));
});
