import t from 'tap';
import OpenAI from 'openai';
import { sdkApp } from './sdk-setup.js';

// database-independent: error messages of the OpenAI surface; no row is read.

t.test('a failed routing on /v1/openai says in the message what each vendor answered', async (t) => {
  const { client, oa, an } = await sdkApp(t);
  oa.defaults = { status: 500 };
  an.defaults = { status: 503 };
  const err = await client.chat.completions
    .create({ model: 'auto', messages: [{ role: 'user', content: 'Hi' }] })
    .catch((e: unknown) => e);
  t.ok(err instanceof OpenAI.APIError, String(err));
  const e = err as InstanceType<typeof OpenAI.APIError>;
  t.equal(e.status, 502);
  t.equal(e.code, 'vendor_error');
  t.match(e.message, /^502 Every candidate vendor for ai\.chat failed\. /);
  t.match(e.message, /oa: oa answered 500: The server had an error while processing your request/);
  t.match(e.message, /an: an answered 503/);

  const stream = await client.chat.completions
    .create({ model: 'alpha', messages: [{ role: 'user', content: 'Hi' }], stream: true })
    .catch((x: unknown) => x);
  t.match((stream as Error).message, /oa: oa answered 500/, 'a stream that never started says it too');
});
