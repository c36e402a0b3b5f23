import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { FAST, receiver } from './receiver.js';

// database-independent: headers refused at creation, before any write.

const send = (app: any, auth: any, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/scheduling/webhook/send', headers: auth, payload });

t.test('headers that would break or subvert every attempt are refused at creation, naming the header', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t);
  const cases: [Record<string, string>, string][] = [
    [{ 'X-Note': 'a\r\nX-Injected: 1' }, 'headers.X-Note'],
    [{ 'X-Note': 'line\nbreak' }, 'headers.X-Note'],
    [{ 'X-Note': 'nul\u0000' }, 'headers.X-Note'],
    [{ 'Bad Name': 'x' }, 'headers.Bad Name'],
    [{ 'X-Ok': 'fine', Expect: '100-continue' }, 'headers.Expect'],
    [{ Host: 'internal.example' }, 'headers.Host'],
    [{ 'Content-Length': '1' }, 'headers.Content-Length'],
    [{ 'Transfer-Encoding': 'chunked' }, 'headers.Transfer-Encoding'],
    [{ Connection: 'close' }, 'headers.Connection'],
    [{ Upgrade: 'websocket' }, 'headers.Upgrade'],
    [{ TE: 'trailers' }, 'headers.TE'],
    [{ 'Keep-Alive': 'timeout=5' }, 'headers.Keep-Alive'],
    [{ 'Proxy-Authorization': 'Basic eDp5' }, 'headers.Proxy-Authorization'],
    [{ 'webhook-signature': 'v1,forged' }, 'headers.webhook-signature'],
  ];
  for (const [headers, param] of cases) {
    const res = await send(app, a.auth, { url: rx.url, payload: {}, headers });
    t.equal(res.statusCode, 400, `${param} is refused`);
    t.ok(res.headers['x-request-id'], 'the answer carries a request id');
    const err = res.json().error;
    t.equal(err.code, 'validation_failed');
    t.equal(err.param, param, 'the error names the header');
    t.ok(err.message.includes(param), 'and so does the message');
  }
  const stored = await app.svc.db.selectFrom('webhook_deliveries').select('delivery_id').execute();
  t.equal(stored.length, 0, 'a refused delivery stores nothing');

  const ok = await send(app, a.auth, {
    url: rx.url,
    payload: {},
    headers: { 'X-Tenant': 'acme\tblue', Authorization: 'Bearer downstream' },
  });
  t.equal(ok.statusCode, 200, 'ordinary headers, tabs included, are accepted');
  await rx.waitFor(1);
  t.equal(rx.hits[0].headers['x-tenant'], 'acme\tblue');
  t.equal(rx.hits[0].headers.authorization, 'Bearer downstream');
});
