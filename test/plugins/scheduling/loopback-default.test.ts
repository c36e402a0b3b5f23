import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeApp, activate, freshDatabaseUrl } from '../../helpers/app.js';
import { startGateway } from '../../helpers/gateway-process.js';
import { FAST, receiver, verify } from './receiver.js';

// database-independent: egress defaults for deliveries; the delivery rows are webhooks.test.ts's, on both.

// The laptop case with the shipped egress defaults (nothing under `egress:` in the config).

t.test('a gateway listening on 127.0.0.1 delivers to a receiver on localhost, and says so at start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-laptop-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const rx = await receiver(t);
  const gw = await startGateway(t, dir, {
    data_dir: dir,
    database: { url: await freshDatabaseUrl(t, dir) },
    log: { level: 'info' },
    jobs: { poll_ms: 50 },
  });
  t.match(
    gw.output(),
    /egress: loopback targets allowed \(egress\.allow_loopback is auto and the gateway listens on 127\.0\.0\.1 only\)/
  );
  const json = { 'content-type': 'application/json' };
  const act = await (await fetch(`${gw.url}/v1/activate`, { method: 'POST', headers: json, body: '{}' })).json();
  const headers = { authorization: `Bearer ${act.primary_api_key}`, ...json };
  const port = new URL(rx.url).port;
  const body = JSON.stringify({ url: `http://localhost:${port}/hook`, payload: { hi: 1 } });
  const res = await fetch(`${gw.url}/v1/scheduling/webhook/send`, { method: 'POST', headers, body });
  t.equal(res.status, 200, await res.clone().text());
  await rx.waitFor(1);
  const secret = (await (await fetch(`${gw.url}/v1/scheduling/webhook/secret`, { headers })).json()).secret;
  t.same(verify(secret, rx.hits[0]), { hi: 1 }, 'delivered, signed');
});

t.test('the same defaults on 0.0.0.0 refuse loopback targets for webhooks, cron and queue pushes', async (t) => {
  const defaults = { allow_private: false, allow_loopback: 'auto' };
  const { app } = await makeApp(t, { ...FAST, server: { host: '0.0.0.0' }, egress: defaults });
  t.equal(app.svc.egress.loopback.allowed, false);
  const a = await activate(app);
  const rx = await receiver(t);
  const calls = [
    { url: '/v1/scheduling/webhook/send', payload: { url: rx.url, payload: {} } },
    { url: '/v1/scheduling/cron', payload: { name: 'x', schedule: '* * * * * *', url: rx.url } },
    { url: '/v1/scheduling/queue/q/subscriptions', payload: { url: `http://localhost:${new URL(rx.url).port}/` } },
  ];
  for (const c of calls) {
    const res = await app.inject({ method: 'POST', url: c.url, headers: a.auth, payload: c.payload });
    t.equal(res.statusCode, 400, c.url);
    t.match(res.json().error, {
      code: 'validation_failed',
      param: 'url',
      message: /loopback.*listens on 0\.0\.0\.0.*egress\.allow_loopback: true/,
    });
  }
  await new Promise((r) => setTimeout(r, 300));
  t.equal(rx.hits.length, 0, 'nothing was sent');
});
