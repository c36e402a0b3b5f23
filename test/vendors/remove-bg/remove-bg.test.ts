import t from 'tap';
import { vendorContext } from '../../helpers/vendor-context.js';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import removeBg from '../../../vendors/remove-bg/index.js';
import type { ImageProcessOutput } from '../../../core/capabilities/image.js';
import { alphaAt, subjectOnFlat } from '../../fakes/test-images.js';
import { REMOVE_BG_KEY, removeBgFake } from '../../fakes/remove-bg-fake.js';

const ctx = vendorContext('remove-bg');
const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });

async function adapter(baseUrl: string, apiKey = REMOVE_BG_KEY) {
  const inst = await removeBg.create({ api_key: apiKey, base_url: baseUrl, size: 'auto' }, ctx);
  return inst.capabilities['image.remove_background'];
}

t.test('the request remove.bg expects: X-Api-Key, multipart image_file, size, format png', async (t) => {
  const fake = await removeBgFake(t);
  const impl = await adapter(fake.baseUrl);
  const input = await subjectOnFlat(64);
  const out = (await impl.invoke({ data: input }, opts())) as ImageProcessOutput;
  t.match(out, { format: 'png', mime: 'image/png', width: 64, height: 64 });
  t.ok((await alphaAt(out.data, 2, 2)) < 10, 'the background is transparent');
  t.equal(await alphaAt(out.data, 32, 32), 255, 'the subject is kept');
  t.equal(fake.requests.length, 1);
  const req = fake.requests[0];
  t.equal(req.apiKey, REMOVE_BG_KEY);
  t.match(req.contentType, /^multipart\/form-data; boundary=/);
  t.same(req.fields, { size: 'auto', format: 'png' });
  t.equal(req.imageBytes, input.length, 'the image travels whole as image_file');
});

t.test('remove.bg errors as the router’s kinds, with remove.bg’s title, never the key', async (t) => {
  const fake = await removeBgFake(t);
  const impl = await adapter(fake.baseUrl);
  const input = await subjectOnFlat(32);
  const cases = [
    [402, { kind: 'quota', message: /Insufficient credits \(insufficient_credits\)/ }],
    [429, { kind: 'rate_limited', retryAfterMs: 7000 }],
    [400, { kind: 'client_error', status: 422, message: /unknown_foreground/ }],
    [500, { kind: 'unavailable', status: 500 }],
  ] as const;
  for (const [status, want] of cases) {
    fake.failNext(status);
    const err = await impl.invoke({ data: input }, opts()).catch((e) => e);
    t.match(err, { name: 'VendorFailure', ...want }, `${status}`);
    t.notMatch(String(err.message), REMOVE_BG_KEY, `${status}: the key is not in the message`);
  }
  const wrongKey = await adapter(fake.baseUrl, 'rbg-wrong-key');
  const auth = await wrongKey.invoke({ data: input }, opts()).catch((e) => e);
  t.match(auth, { kind: 'auth', status: 403, message: /API Key invalid/ });
  t.notMatch(auth.message, 'rbg-wrong-key');
});

t.test(
  'nothing listening is not_sent (safe to fail over); the config needs a key, its default URL is remove.bg',
  async (t) => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const impl = await adapter(`http://127.0.0.1:${port}/v1.0`);
    await t.rejects(impl.invoke({ data: await subjectOnFlat(16) }, opts()), { kind: 'not_sent' });
    const { Value } = await import('@sinclair/typebox/value');
    t.notOk(Value.Check(removeBg.configSchema, {}), 'api_key is required');
    t.same(Value.Default(removeBg.configSchema, { api_key: 'k' }), {
      api_key: 'k',
      base_url: 'https://api.remove.bg/v1.0',
      size: 'auto',
    });
  }
);
