import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { makeApp, activate } from '../../helpers/app.js';
import { FAST, accountSecret, receiver, verify } from './receiver.js';
import { until } from '../../helpers/wait.js';
import { shiftedClock } from '../../helpers/clock.js';

const send = (app: any, auth: any, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/scheduling/webhook/send', headers: auth, payload });
const delivery = async (app: any, auth: any, id: string) =>
  (await app.inject({ method: 'GET', url: `/v1/scheduling/webhook/deliveries/${id}`, headers: auth })).json();

t.test('a webhook is delivered signed with the account secret', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t);
  const res = await send(app, a.auth, {
    url: `${rx.url}/hook`,
    payload: { order: 42, items: ['a'] },
    event_type: 'order.paid',
  });
  t.equal(res.statusCode, 200);
  const { delivery_id, state } = res.json();
  t.match(delivery_id, /^dlv_/);
  t.equal(state, 'pending');
  await rx.waitFor(1);
  const secret = await accountSecret(app, a.auth);
  t.match(secret, /^whsec_/);
  const hit = rx.hits[0];
  t.same(verify(secret, hit), { order: 42, items: ['a'] }, 'standardwebhooks verifies it');
  t.equal(hit.headers['webhook-id'], delivery_id);
  t.equal(hit.headers['webhook-event-type'], 'order.paid');
  t.equal(hit.headers['content-type'], 'application/json');
  t.equal(hit.url, '/hook');
  t.throws(
    () => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(hit.body, hit.headers as any),
    'another secret does not verify'
  );
  await until('delivered', async () => (await delivery(app, a.auth, delivery_id)).state === 'delivered');
  const d = await delivery(app, a.auth, delivery_id);
  t.equal(d.attempts.length, 1);
  t.match(d.attempts[0], { attempt: 1, status: 'succeeded', response_code: 200 });
  t.equal(d.next_attempt_at, undefined);
  t.equal(d.url, `${rx.url}/hook`);
});

t.test('a receiver failing twice gets the third attempt; the record shows three', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t, (h) => ({ status: h.n <= 2 ? 500 : 204 }));
  const { delivery_id } = (await send(app, a.auth, { url: rx.url, payload: { n: 1 } })).json();
  await until('delivered', async () => (await delivery(app, a.auth, delivery_id)).state === 'delivered');
  const secret = await accountSecret(app, a.auth);
  t.equal(rx.hits.length, 3);
  for (const h of rx.hits) {
    t.same(verify(secret, h), { n: 1 });
    t.equal(h.headers['webhook-id'], delivery_id, 'the same webhook-id on every attempt');
  }
  const d = await delivery(app, a.auth, delivery_id);
  t.same(
    d.attempts.map((x: any) => [x.attempt, x.status, x.response_code]),
    [
      [1, 'failed', 500],
      [2, 'failed', 500],
      [3, 'succeeded', 204],
    ]
  );
  t.ok(rx.hits[1].at - rx.hits[0].at >= 40, 'the second attempt waited its place in the schedule');
});

t.test('410 stops, 3xx is a failure, attempts run out into failed', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const gone = await receiver(t, () => ({ status: 410 }));
  const elsewhere = await receiver(t);
  const redirect = await receiver(t, () => ({ status: 302, headers: { location: `${elsewhere.url}/x` } }));
  const broken = await receiver(t, () => ({ status: 503 }));
  const g = (await send(app, a.auth, { url: gone.url, payload: {} })).json().delivery_id;
  const r = (await send(app, a.auth, { url: redirect.url, payload: {}, max_attempts: 2 })).json().delivery_id;
  const b = (await send(app, a.auth, { url: broken.url, payload: {}, max_attempts: 3 })).json().delivery_id;
  await until('all failed', async () => {
    const s = await Promise.all([g, r, b].map(async (id) => (await delivery(app, a.auth, id)).state));
    return s.every((x) => x === 'failed');
  });
  t.equal((await delivery(app, a.auth, g)).attempts.length, 1, '410: no retry');
  const rd = await delivery(app, a.auth, r);
  t.equal(rd.attempts.length, 2);
  t.equal(rd.attempts[0].response_code, 302);
  t.match(rd.attempts[0].error, /redirect/);
  t.equal(elsewhere.hits.length, 0, 'the redirect was not followed');
  t.equal((await delivery(app, a.auth, b)).attempts.length, 3);
  t.equal(broken.hits.length, 3);
  const m = await app.svc.jobs.metrics();
  t.equal(m.kinds['scheduling.webhook'].dead, 3);
});

t.test('retry-after is honoured', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t, (h) => (h.n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
  const { delivery_id } = (await send(app, a.auth, { url: rx.url, payload: {} })).json();
  await rx.waitFor(1);
  await until('retrying', async () => (await delivery(app, a.auth, delivery_id)).state === 'retrying');
  const pending = await delivery(app, a.auth, delivery_id);
  t.ok(pending.next_attempt_at);
  await rx.waitFor(2);
  const gap = rx.hits[1].at - rx.hits[0].at;
  t.ok(gap >= 950, `waited ${gap} ms for a retry-after of 1 s (the schedule says 50 ms)`);
});

t.test('rotation: the old secret signs alongside the new during the grace period', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t);
  const before = await accountSecret(app, a.auth);
  const rot = await app.inject({
    method: 'POST',
    url: '/v1/scheduling/webhook/secret/rotate',
    headers: a.auth,
    payload: {},
  });
  t.equal(rot.statusCode, 200);
  const after = rot.json().secret;
  t.not(after, before);
  t.ok(Date.parse(rot.json().old_secret_expires_at) > Date.now() + 86_000_000, 'default grace is a day');
  const shown = (await app.inject({ method: 'GET', url: '/v1/scheduling/webhook/secret', headers: a.auth })).json();
  t.equal(shown.secret, after);
  t.ok(shown.previous_expires_at);
  await send(app, a.auth, { url: rx.url, payload: { v: 1 } });
  await rx.waitFor(1);
  t.equal(String(rx.hits[0].headers['webhook-signature']).split(' ').length, 2);
  t.same(verify(before, rx.hits[0]), { v: 1 }, 'the old secret verifies');
  t.same(verify(after, rx.hits[0]), { v: 1 }, 'the new secret verifies');

  const again = (
    await app.inject({
      method: 'POST',
      url: '/v1/scheduling/webhook/secret/rotate',
      headers: a.auth,
      payload: { grace_seconds: 0 },
    })
  ).json().secret;
  shiftedClock(t).advance(1000); // the signing cache holds a second: moved past, not waited out
  await send(app, a.auth, { url: rx.url, payload: { v: 2 } });
  await rx.waitFor(2);
  t.same(verify(again, rx.hits[1]), { v: 2 });
  t.throws(() => verify(after, rx.hits[1]), 'a secret rotated out with no grace no longer signs');
  t.same(verify(before, rx.hits[1]), { v: 2 }, 'the first secret is still within its day of grace');
});

t.test('a delivery can be signed with its own secret; idempotency keys de-duplicate', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t);
  const own = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const first = await send(app, a.auth, {
    url: rx.url,
    payload: { k: 1 },
    secret: own,
    idempotency_key: 'k-1',
    headers: { 'x-tenant': 't1' },
  });
  const second = await send(app, a.auth, {
    url: rx.url,
    payload: { k: 1 },
    secret: own,
    idempotency_key: 'k-1',
    headers: { 'x-tenant': 't1' },
  });
  t.equal(second.headers['idempotent-replayed'], 'true');
  t.equal(second.json().delivery_id, first.json().delivery_id);
  await rx.waitFor(1);
  t.same(verify(own, rx.hits[0]), { k: 1 });
  t.equal(rx.hits[0].headers['x-tenant'], 't1');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(rx.hits.length, 1, 'one delivery');
  const rows = await app.svc.db.selectFrom('webhook_deliveries').select('delivery_id').execute();
  t.equal(rows.length, 1);
});

t.test('bad input is 400 (or 413) and schedules nothing; another account sees 404', async (t) => {
  const { app } = await makeApp(t, {
    ...FAST,
    egress: { allow_private: false },
    plugins: { scheduling: { max_payload_bytes: 1000 } },
  });
  const a = await activate(app);
  const cases: [Record<string, unknown>, number, string][] = [
    [{ url: 'ftp://example.com/x', payload: {} }, 400, 'url'],
    [{ url: 'file:///etc/passwd', payload: {} }, 400, 'url'],
    [{ url: 'http://127.0.0.1:9/x', payload: {} }, 400, 'url'],
    [{ url: 'http://169.254.169.254/latest', payload: {} }, 400, 'url'],
    [{ url: 'http://[::1]/', payload: {} }, 400, 'url'],
    [{ url: 'http://localhost/', payload: {} }, 400, 'url'],
    [{ url: 'https://93.184.216.34/', payload: { big: 'x'.repeat(2000) } }, 413, 'payload'],
    [{ url: 'https://93.184.216.34/', payload: 'text' }, 400, 'payload'],
    [{ url: 'https://93.184.216.34/', payload: {}, secret: 'nope' }, 400, 'secret'],
    [{ url: 'https://93.184.216.34/', payload: {}, max_attempts: 99 }, 400, 'max_attempts'],
    [{ url: 'https://93.184.216.34/', payload: {}, headers: { 'webhook-id': 'x' } }, 400, 'headers.webhook-id'],
    [{ url: 'https://93.184.216.34/', payload: {}, extra: 1 }, 400, 'extra'],
    [{ payload: {} }, 400, 'url'],
  ];
  for (const [body, status, param] of cases) {
    const res = await send(app, a.auth, body);
    t.equal(res.statusCode, status, JSON.stringify(body).slice(0, 80));
    t.equal(res.json().error.param, param);
    t.ok(res.json().error.details.errors?.length >= 1 || status === 413);
  }
  t.equal((await app.svc.db.selectFrom('webhook_deliveries').select('delivery_id').execute()).length, 0);
  t.equal(
    (await app.svc.db.selectFrom('jobs').select('job_id').where('kind', 'like', 'scheduling.%').execute()).length,
    0
  );

  const { app: app2 } = await makeApp(t, FAST);
  const owner = await activate(app2);
  const other = await activate(app2);
  const rx = await receiver(t);
  const { delivery_id } = (await send(app2, owner.auth, { url: rx.url, payload: {} })).json();
  const res = await app2.inject({
    method: 'GET',
    url: `/v1/scheduling/webhook/deliveries/${delivery_id}`,
    headers: other.auth,
  });
  t.equal(res.statusCode, 404);
  t.equal(res.json().error.code, 'not_found');
  t.equal(
    (await app2.inject({ method: 'GET', url: '/v1/scheduling/webhook/deliveries', headers: other.auth })).json().items
      .length,
    0
  );
  t.equal(
    (await app2.inject({ method: 'GET', url: '/v1/scheduling/webhook/deliveries', headers: owner.auth })).json().items
      .length,
    1
  );
  t.not(
    await accountSecret(app2, owner.auth),
    await accountSecret(app2, other.auth),
    'each account has its own secret'
  );
});

t.test('a delivery whose last attempt died with its node ends failed, not pending', async (t) => {
  const { app } = await makeApp(t, { ...FAST, jobs: { poll_ms: 20, lease_ms: 200 } });
  const a = await activate(app);
  const now = Date.now();
  // What a node killed during the last attempt leaves behind: a running job with a lapsed lease.
  await app.svc.db
    .insertInto('webhook_deliveries')
    .values({
      delivery_id: 'dlv_crashed1',
      account_id: a.account_id,
      url: 'http://127.0.0.1:9/',
      payload: '{}',
      event_type: null,
      headers: null,
      secret: null,
      state: 'retrying',
      max_attempts: 2,
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await app.svc.db
    .insertInto('jobs')
    .values({
      job_id: 'dlv_crashed1',
      kind: 'scheduling.webhook',
      payload: JSON.stringify({ delivery_id: 'dlv_crashed1' }),
      unique_key: null,
      state: 'running',
      run_at: now,
      attempts: 2,
      max_attempts: 2,
      lease_owner: 'gone:1:x',
      lease_until: now - 1,
      last_error: 'receiver answered 500',
      created_at: now,
      updated_at: now,
    })
    .execute();
  await until('failed', async () => (await delivery(app, a.auth, 'dlv_crashed1')).state === 'failed');
  t.equal((await delivery(app, a.auth, 'dlv_crashed1')).next_attempt_at, undefined);
});
