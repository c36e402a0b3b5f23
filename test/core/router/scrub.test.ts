import t from 'tap';
import { Type } from '@sinclair/typebox';
import { secret } from '../../../core/define.js';
import { failureText, scrubText, secretValues, SHOWN_CHARS } from '../../../core/router/scrub.js';

t.test(
  'known secrets go in every form a vendor may echo them: as is, JSON-escaped, URL-encoded, their head',
  async (t) => {
    const key = 'k3y/with"odd+chars=0123456789';
    const text = `a ${key} b ${JSON.stringify(key)} c ${encodeURIComponent(key)} d ${key.slice(0, 8)}***`;
    const out = scrubText(text, [key]);
    t.notOk(out.includes(key.slice(0, 8)), out);
    t.notOk(out.includes(encodeURIComponent(key)), out);
    t.equal(
      scrubText('too short ab', ['ab']),
      'too short ab',
      'a value under 4 characters is no credential and is left alone'
    );
  }
);

t.test('credential-shaped text goes even when no one told the scrubber about it', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['Authorization: Bearer abc.def-ghi', /^Authorization: \[redacted\]$/],
    ['{"x-api-key":"proxy-owned-value","host":"h"}', /^\{"x-api-key":"\[redacted\]","host":"h"\}$/],
    ['{\\"authorization\\":\\"Basic dXNlcjpwYXNz\\"}', /^\{\\"authorization\\":\\"\[redacted\]\\"\}$/],
    ['token Bearer eyJhbGciOi.x.y used', /^token Bearer \[redacted\] used$/],
    ['GET /v1beta/models?key=AIzaSomething&alt=sse', /\?key=\[redacted\]&alt=sse$/],
    ['key sk-ant-api03-abcdefghijkl rejected', /^key \[redacted\] rejected$/],
    ['id AKIAABCDEFGHIJKLMNOP denied', /^id \[redacted\] denied$/],
  ];
  for (const [text, want] of cases) t.match(scrubText(text, []), want, text);
  t.equal(
    scrubText('authorization failed for this request', []),
    'authorization failed for this request',
    'words stay words'
  );
});

t.test("scrubbed before it is cut: a secret across the excerpt's end leaves no head behind", async (t) => {
  const key = 'zz-secret-value-0123456789abcdef';
  const text = `${'x'.repeat(SHOWN_CHARS - 10)}${key} and more`;
  const { shown, logged } = failureText(new Error(text), [key]);
  t.ok(shown.length <= SHOWN_CHARS);
  t.notOk(shown.includes('zz-secr'), shown);
  t.match(logged, /\[redacted\] and more$/);
});

t.test('secret values from a config by its schema, at any depth', async (t) => {
  const schema = Type.Object({
    api_key: secret(Type.String()),
    nested: Type.Object({ token: secret(Type.String()), name: Type.String() }),
    list: Type.Array(Type.Object({ s: secret(Type.String()) })),
  });
  t.same(
    secretValues(schema, { api_key: 'a1', nested: { token: 't1', name: 'n' }, list: [{ s: 's1' }, { s: '' }] }).sort(),
    ['a1', 's1', 't1']
  );
});
