import t from 'tap';
import { httpHealthProbe } from '../../../core/vendor-http/health-probe.js';

const signal = () => new AbortController().signal;

t.test('the probe GETs the URL with the credentials it is given, and a 2xx is ok', async (t) => {
  const seen: { url: string; method?: string; headers: unknown }[] = [];
  let cancelled = false;
  const fetchFn = (async (url: string, init: RequestInit) => {
    seen.push({ url, method: init.method, headers: init.headers });
    const body = new ReadableStream({ cancel: () => void (cancelled = true) });
    return new Response(body, { status: 200 });
  }) as unknown as typeof fetch;
  const probe = httpHealthProbe(fetchFn, 'http://vendor.test/models', (c) => ({ authorization: c?.key ?? 'own' }), 'v');
  t.same(await probe({ signal: signal() }), { ok: true });
  t.same(await probe({ signal: signal(), credentials: { key: 'byok' } }), { ok: true });
  t.same(seen, [
    { url: 'http://vendor.test/models', method: 'GET', headers: { authorization: 'own' } },
    { url: 'http://vendor.test/models', method: 'GET', headers: { authorization: 'byok' } },
  ]);
  t.ok(cancelled, 'the body is dropped unread');
});

t.test('a refusal or a failed connection is not ok, with the vendor message, never a throw', async (t) => {
  const refusing = (async () =>
    new Response(JSON.stringify({ error: { message: 'Incorrect API key' } }), { status: 401 })) as typeof fetch;
  t.same(await httpHealthProbe(refusing, 'http://vendor.test/models', () => ({}), 'v')({ signal: signal() }), {
    ok: false,
    error: 'v answered 401: Incorrect API key',
  });
  const down = (async () => {
    throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
  }) as typeof fetch;
  t.same(await httpHealthProbe(down, 'http://vendor.test/models', () => ({}), 'v')({ signal: signal() }), {
    ok: false,
    error: 'v: cannot connect (ECONNREFUSED)',
  });
});
