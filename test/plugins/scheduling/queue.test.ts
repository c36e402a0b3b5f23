import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { FAST, accountSecret, receiver, verify } from './receiver.js';
import { frozenClock } from '../../helpers/clock.js';
import { until } from '../../helpers/wait.js';

const publish = (app: any, auth: any, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/scheduling/queue/publish', headers: auth, payload });
const receive = async (app: any, auth: any, queue: string, body: Record<string, unknown> = {}) => {
  const res = await app.inject({
    method: 'POST',
    url: `/v1/scheduling/queue/${queue}/receive`,
    headers: auth,
    payload: body,
  });
  if (res.statusCode !== 200) throw new Error(`receive: ${res.statusCode} ${res.body}`);
  return res.json().messages;
};
const ackAll = async (app: any, auth: any, queue: string, handles: string[]) =>
  (
    await app.inject({
      method: 'POST',
      url: `/v1/scheduling/queue/${queue}/ack`,
      headers: auth,
      payload: { receipt_handles: handles },
    })
  ).json().acked;

t.test('a delayed message becomes visible after its delay; ack removes it', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const now = await publish(app, a.auth, { queue: 'jobs', payload: { n: 1 } });
  t.equal(now.statusCode, 200);
  t.match(now.json().message_id, /^msg_/);
  // Time moves only when the test moves it: no check can run past the delay on a loaded machine.
  const clock = frozenClock(t);
  const later = (await publish(app, a.auth, { queue: 'jobs', payload: { n: 2 }, delay_seconds: 2 })).json().message_id;
  for (let i = 0; i < 5; i++) await publish(app, a.auth, { queue: 'few', payload: { i } });
  t.equal((await receive(app, a.auth, 'few', { max: 3 })).length, 3, 'max is a cap');
  const first = await receive(app, a.auth, 'jobs', { max: 10 });
  t.same(
    first.map((m: any) => m.payload),
    [{ n: 1 }],
    'the delayed one is not visible yet'
  );
  t.match(first[0], { receive_count: 1, receipt_handle: /^rh_/ });
  t.equal(await ackAll(app, a.auth, 'jobs', [first[0].receipt_handle]), 1);
  clock.advance(1900);
  t.same(await receive(app, a.auth, 'jobs', { max: 10 }), [], 'not before its delay');
  clock.advance(100);
  const second = await receive(app, a.auth, 'jobs', { max: 10 });
  t.same(
    second.map((m: any) => m.message_id),
    [later]
  );
  t.equal(await ackAll(app, a.auth, 'jobs', [second[0].receipt_handle]), 1);
  t.same(await receive(app, a.auth, 'jobs'), []);
  t.same(await receive(app, a.auth, 'other-queue'), [], 'queues are separate');
});

t.test('unacked messages reappear after the visibility timeout; a stale receipt acks nothing', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  await publish(app, a.auth, { queue: 'q', payload: { v: 1 } });
  const clock = frozenClock(t);
  const [m1] = await receive(app, a.auth, 'q', { visibility_timeout: 1 });
  t.same(await receive(app, a.auth, 'q'), [], 'hidden while in flight');
  clock.advance(990);
  t.same(await receive(app, a.auth, 'q'), [], 'hidden until its visibility timeout');
  clock.advance(10);
  const [m2] = await receive(app, a.auth, 'q', { visibility_timeout: 30 });
  t.equal(m2.message_id, m1.message_id);
  t.equal(m2.receive_count, 2);
  t.not(m2.receipt_handle, m1.receipt_handle);
  t.equal(await ackAll(app, a.auth, 'q', [m1.receipt_handle]), 0, 'the first receipt is stale');
  t.equal(await ackAll(app, a.auth, 'q', [m2.receipt_handle]), 1);
});

t.test('a message received too often goes to the dead-letter list', async (t) => {
  const { app } = await makeApp(t, { ...FAST, plugins: { scheduling: { queue_max_receives: 2 } } });
  const a = await activate(app);
  const id = (await publish(app, a.auth, { queue: 'dl', payload: { poison: true } })).json().message_id;
  const clock = frozenClock(t);
  for (let i = 0; i < 2; i++) {
    const got = await receive(app, a.auth, 'dl', { visibility_timeout: 1 });
    t.equal(got.length, 1);
    clock.advance(1000);
  }
  t.same(await receive(app, a.auth, 'dl'), [], 'not handed out a third time');
  const dead = (
    await app.inject({ method: 'GET', url: '/v1/scheduling/queue/dl/dead-letter', headers: a.auth })
  ).json();
  t.equal(dead.items.length, 1);
  t.match(dead.items[0], { message_id: id, payload: { poison: true }, receive_count: 2, reason: /received 2 times/ });
});

t.test('concurrent receivers never get the same message', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  for (let i = 0; i < 60; i++) await publish(app, a.auth, { queue: 'c', payload: { i } });
  const batches = await Promise.all(Array.from({ length: 6 }, () => receive(app, a.auth, 'c', { max: 15 })));
  t.ok(
    batches.every((b: any[]) => b.length <= 15),
    `no receive returned more than max (${batches.map((b: any[]) => b.length).join(', ')})`
  );
  const ids = batches.flat().map((m: any) => m.message_id);
  t.equal(ids.length, 60);
  t.equal(new Set(ids).size, 60);
});

t.test('idempotency keys de-duplicate publishes', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const one = (await publish(app, a.auth, { queue: 'i', payload: { x: 1 }, idempotency_key: 'pub-1' })).json();
  const two = await publish(app, a.auth, { queue: 'i', payload: { x: 1 }, idempotency_key: 'pub-1' });
  t.equal(two.json().message_id, one.message_id);
  t.equal(two.headers['idempotent-replayed'], 'true');
  t.equal((await receive(app, a.auth, 'i', { max: 10 })).length, 1);
});

t.test('push subscriptions get every message signed, with retries', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  let failedOnce = false; // the first push of message 2 fails, so it is retried
  const rx = await receiver(t, (h) => {
    if (JSON.parse(h.body).n !== 2 || failedOnce) return { status: 200 };
    failedOnce = true;
    return { status: 503 };
  });
  const sub = await app.inject({
    method: 'POST',
    url: '/v1/scheduling/queue/events/subscriptions',
    headers: a.auth,
    payload: { url: `${rx.url}/push` },
  });
  t.equal(sub.statusCode, 200);
  t.match(sub.json(), { subscription_id: /^sub_/, queue: 'events' });
  const ids = [];
  let delayedSent = 0;
  for (let n = 1; n <= 4; n++) {
    if (n === 4) delayedSent = Date.now();
    ids.push(
      (await publish(app, a.auth, { queue: 'events', payload: { n }, delay_seconds: n === 4 ? 0.5 : 0 })).json()
        .message_id
    );
  }
  await rx.waitFor(5);
  const secret = await accountSecret(app, a.auth);
  const byId = new Map<string, number>();
  for (const h of rx.hits) {
    const p = verify(secret, h) as { n: number };
    t.equal(h.headers['webhook-id'], ids[p.n - 1], 'the message id is the webhook-id');
    t.equal(h.headers['webhook-event-type'], 'queue.events');
    byId.set(h.headers['webhook-id'] as string, (byId.get(h.headers['webhook-id'] as string) ?? 0) + 1);
  }
  t.equal(byId.size, 4);
  t.equal(byId.get(ids[1]), 2, 'message 2 was retried after its 503');
  // Measured from its own publish (the first push may itself be late on a loaded machine).
  const delayedAt = rx.hits.find((h) => JSON.parse(h.body).n === 4)!.at;
  t.ok(
    delayedAt - delayedSent >= 490,
    `the delayed one was pushed after its delay (${delayedAt - delayedSent} ms after it was published)`
  );
  t.same(await receive(app, a.auth, 'events'), [], 'pushed messages are not pulled');
  const list = (
    await app.inject({ method: 'GET', url: '/v1/scheduling/queue/events/subscriptions', headers: a.auth })
  ).json();
  t.equal(list.items.length, 1);
  const del = await app.inject({
    method: 'DELETE',
    url: `/v1/scheduling/queue/subscriptions/${sub.json().subscription_id}`,
    headers: a.auth,
  });
  t.same(del.json(), { ok: true });
  await until('settled', async () => (await app.svc.jobs.metrics()).kinds['scheduling.queue.push']?.queued === 0);
});

t.test('bad input is 400 (or 413) and publishes nothing; other accounts see nothing', async (t) => {
  const { app } = await makeApp(t, {
    ...FAST,
    egress: { allow_private: false },
    plugins: { scheduling: { max_payload_bytes: 200, queue_max_delay_seconds: 3600 } },
  });
  const a = await activate(app);
  const cases: [Record<string, unknown>, number, string][] = [
    [{ queue: 'q', payload: {}, delay_seconds: -1 }, 400, 'delay_seconds'],
    [{ queue: 'q', payload: {}, delay_seconds: 7200 }, 400, 'delay_seconds'],
    [{ queue: 'q', payload: {}, delay_seconds: '5' }, 400, 'delay_seconds'],
    [{ queue: 'bad name!', payload: {} }, 400, 'queue'],
    [{ queue: 'q', payload: [1, 2] }, 400, 'payload'],
    [{ queue: 'q', payload: { s: 'z'.repeat(300) } }, 413, 'payload'],
    [{ queue: 'q' }, 400, 'payload'],
  ];
  for (const [body, status, param] of cases) {
    const res = await publish(app, a.auth, body);
    t.equal(res.statusCode, status, JSON.stringify(body).slice(0, 80));
    t.equal(res.json().error.param, param);
  }
  for (const url of ['file:///tmp/x', 'http://192.168.0.10/', 'http://[fe80::1]/']) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/scheduling/queue/q/subscriptions',
      headers: a.auth,
      payload: { url },
    });
    t.equal(res.statusCode, 400, url);
    t.equal(res.json().error.param, 'url');
  }
  t.equal((await app.svc.db.selectFrom('queue_messages').select('message_id').execute()).length, 0);
  t.equal((await app.svc.db.selectFrom('queue_subscriptions').select('subscription_id').execute()).length, 0);
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/v1/scheduling/queue/q/receive',
        headers: a.auth,
        payload: { max: 500 },
      })
    ).statusCode,
    400
  );

  const b = await activate(app);
  await publish(app, a.auth, { queue: 'shared-name', payload: { mine: true } });
  t.same(await receive(app, b.auth, 'shared-name'), [], "another account's queue of the same name is another queue");
  const [m] = await receive(app, a.auth, 'shared-name', { visibility_timeout: 1 });
  t.equal(await ackAll(app, b.auth, 'shared-name', [m.receipt_handle]), 0, 'another account cannot ack it');
  const sub = (
    await app.inject({
      method: 'POST',
      url: '/v1/scheduling/queue/q/subscriptions',
      headers: a.auth,
      payload: { url: 'https://93.184.216.34/hook' },
    })
  ).json();
  t.equal(
    (
      await app.inject({
        method: 'DELETE',
        url: `/v1/scheduling/queue/subscriptions/${sub.subscription_id}`,
        headers: b.auth,
      })
    ).statusCode,
    404
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/scheduling/queue/q/subscriptions', headers: b.auth })).json().items
      .length,
    0
  );
});
