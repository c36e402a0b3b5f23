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

t.test('a secret goes in every encoding a vendor may echo, whole or any long run of it, any case', async (t) => {
  const keys = [
    'sk_live_tAYSVVzUTQEEkpQ5tD9e6pwggS6ZHtoS',
    'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'p@ss word+with&odd=chars/0123456789',
  ];
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const encodings: Record<string, (s: string) => string> = {
    raw: (s) => s,
    json: (s) => JSON.stringify(s).slice(1, -1),
    url: encodeURIComponent,
    form: (s) => new URLSearchParams({ k: s }).toString().slice(2),
    base64: b64,
    base64url: (s) => Buffer.from(s).toString('base64url'),
    basic: (s) => b64(`user:${s}`),
    basicOffset: (s) => b64(`us:${s}`),
    hex: (s) => Buffer.from(s).toString('hex'),
    HEX: (s) => Buffer.from(s).toString('hex').toUpperCase(),
    upper: (s) => s.toUpperCase(),
    lower: (s) => s.toLowerCase(),
  };
  const parts: Record<string, (s: string) => string> = {
    whole: (s) => s,
    'first half': (s) => s.slice(0, Math.ceil(s.length / 2)),
    'second half': (s) => s.slice(Math.floor(s.length / 2)),
    'middle 16': (s) => s.slice(9, 25),
  };
  let echoes = 0;
  for (const key of keys) {
    for (const [enc, encode] of Object.entries(encodings)) {
      for (const [part, cutOf] of Object.entries(parts)) {
        const echoed = encode(cutOf(key));
        if (echoed.length < 16) continue;
        const text = `vendor said: {"error":"invalid key ${echoed}","hint":"check your settings"}`;
        const out = scrubText(text, [key]);
        echoes++;
        t.notOk(out.includes(echoed), `${enc} of the ${part}: ${out}`);
        t.match(out, /^vendor said: \{"error":"invalid key .*\[redacted\].*","hint":"check your settings"\}$/);
        // Nothing of 12 characters or more of the echo is left.
        const rest = out.replace('[redacted]', '\u0000');
        for (let i = 0; i + 12 <= echoed.length; i++) {
          if (rest.includes(echoed.slice(i, i + 12))) {
            t.fail(`${enc} of the ${part}: "${echoed.slice(i, i + 12)}" left in ${out}`);
            break;
          }
        }
      }
    }
  }
  t.ok(echoes > 100, `${echoes} echoes`);
  const words = 'The request failed because the account is over its monthly quota; retry after 2026-12-03.';
  t.equal(scrubText(words, keys), words, 'text that is not the secret stays');
  const other = 'pk_test_0000000000000000000000000000ZZZZ';
  t.equal(scrubText(`other key ${other}`, ['sk_live_tAYSVVzUTQEEkpQ5tD9e6pwggS6ZHtoS']), `other key ${other}`);
});
