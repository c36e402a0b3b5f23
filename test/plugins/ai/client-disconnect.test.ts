import t from 'tap';
import { connect } from 'node:net';
import { traceLoggedApp } from '../../helpers/trace-logged-app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { MODELS } from './setup.js';
import { until } from '../../helpers/wait.js';

// database-independent: a disconnect logged and counted; no row is read.

// A client that hangs up while a non-streaming chat waits on a slow vendor is a normal event:
// logged at info as a disconnect, never as an unhandled error, and counted in /metrics.

t.test('a client closing its socket mid-chat is logged as a disconnect and counted', async (t) => {
  const oa = await openAiFake({ key: 'sk-oa' }).start('/v1');
  t.teardown(() => oa.close());
  const { app, logged } = await traceLoggedApp(t, {
    egress: { allow_private: true },
    vendors: [{ id: 'oa', use: 'openai', config: { api_key: 'sk-oa', base_url: oa.url, models: ['alpha'] } }],
    plugins: { ai: { models: MODELS } },
  });
  const act = (await app.inject({ method: 'POST', url: '/v1/activate', payload: {} })).json();
  const before = await app.svc.wallet.balance(act.account_id);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;

  oa.next({ delayMs: 3000 });
  const body = JSON.stringify({ messages: 'Say hi', model: 'alpha' });
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  sock.write(
    `POST /v1/ai/chat HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${act.primary_api_key}\r\n`
      + `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
  await until('the vendor to get the call', () => oa.requests.length > 0);
  t.equal(oa.requests.length, 1, 'the vendor got the call');
  sock.destroy();

  const lines = () =>
    logged()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  await until('a disconnect line', () => lines().some((l) => /client closed/.test(l.msg)));
  const gone = lines().find((l) => /client closed/.test(l.msg));
  t.ok(gone, 'a disconnect line');
  t.equal(gone?.level, 30, 'at info');
  t.notOk(
    lines().some((l) => l.level >= 50),
    'nothing at error level'
  );

  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  t.match(metrics, /client_disconnects_total\{method="POST",route="\/v1\/ai\/chat"\} 1/);
  t.equal(await app.svc.wallet.balance(act.account_id), before, 'nothing charged');
});
