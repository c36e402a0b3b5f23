import t from 'tap';
import { outboxApp, send, untilState } from './outbox-app.js';
import { fake } from '../../helpers/outbox-vendor.js';
import { receiver, verify } from '../../plugins/scheduling/receiver.js';

t.test('accept answers queued, the job sends once, and the sent event reaches the endpoint signed', async (t) => {
  const { app, a } = await outboxApp(t);
  const rx = await receiver(t);
  const ep = await app.inject({
    method: 'POST',
    url: '/v1/events/endpoints',
    headers: a.auth,
    payload: { url: `${rx.url}/events` },
  });
  t.equal(ep.statusCode, 200, ep.body);
  const secret = ep.json().secret;
  t.match(secret, /^whsec_/);
  const before = await app.svc.wallet.balance(a.account_id);
  const res = await send(app, a, { to: 'alice' });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().state, 'queued');
  const id = res.json().message_id;
  const sent = await untilState(app, a, id, 'sent');
  t.equal(sent.vendor, 'fake1');
  t.equal(sent.segments, 2, 'the area merged what the vendor answered');
  t.same(fake('fake1').calls, [{ to: 'alice', idempotencyKey: id }], 'one call, keyed by the record id');
  t.equal(before - (await app.svc.wallet.balance(a.account_id)), sent.cost_micros);
  t.equal(sent.cost_micros, 1000);
  await rx.waitFor(1);
  const body = verify(secret, rx.hits[0]) as any;
  t.equal(body.type, 'outboxtest.sent');
  t.equal(body.data.message_id, id);
  t.equal(body.data.state, 'sent');
  t.match(rx.hits[0].headers['webhook-id'], /^dlv_/);
});
