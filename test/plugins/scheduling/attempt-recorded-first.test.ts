import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { FAST, receiver, type Reply } from './receiver.js';
import { until } from '../../helpers/wait.js';

// Issue 27: an attempt is recorded before its call leaves, so a node killed while the receiver
// holds the call leaves the attempt on record (`started`), not nothing; the outcome follows.

t.test('a delivery attempt is on record while the receiver holds the call', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  let release!: () => void;
  const held = new Promise<Reply>((r) => (release = () => r({ status: 200 })));
  const rx = await receiver(t, () => held);
  t.teardown(() => release());
  const delivery = async (id: string) =>
    (await app.inject({ method: 'GET', url: `/v1/scheduling/webhook/deliveries/${id}`, headers: a.auth })).json();
  const sent = await app.inject({
    method: 'POST',
    url: '/v1/scheduling/webhook/send',
    headers: a.auth,
    payload: { url: `${rx.url}/in`, payload: { n: 1 } },
  });
  const id = sent.json().delivery_id;
  await rx.waitFor(1);
  const during = await delivery(id);
  t.match(during.attempts, [{ attempt: 1, status: 'started', response_code: null }], 'recorded before the answer');
  t.equal(rx.hits[0].headers['webhook-id'], id);
  release();
  await until('delivered', async () => (await delivery(id)).state === 'delivered');
  t.match((await delivery(id)).attempts, [{ attempt: 1, status: 'succeeded', response_code: 200 }]);
});
