import t from 'tap';
import { buildApp } from '../../../core/app.js';
import { makeApp, activate } from '../../helpers/app.js';
import { FAST, accountSecret, receiver, verify } from './receiver.js';
import { until } from '../../helpers/wait.js';

const create = (app: any, auth: any, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/scheduling/cron', headers: auth, payload });
const runs = async (app: any, auth: any, id: string) =>
  (await app.inject({ method: 'GET', url: `/v1/scheduling/cron/${id}/runs?limit=200`, headers: auth })).json().items;

t.test('a cron job POSTs its payload on schedule, signed, and records its runs', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t, (h) => ({ status: h.n === 1 ? 500 : 200 }));
  const before = Date.now();
  const res = await create(app, a.auth, {
    name: 'tick',
    schedule: '* * * * * *',
    url: `${rx.url}/cron`,
    payload: { job: 'tick' },
    retries: 2,
  });
  t.equal(res.statusCode, 200);
  const c = res.json();
  t.match(c, {
    name: 'tick',
    schedule: '* * * * * *',
    enabled: true,
    timezone: 'UTC',
    retries: 2,
    timeout_seconds: 300,
    payload: { job: 'tick' },
  });
  t.match(c.cron_id, /^cron_/);
  const next = Date.parse(c.next_run_at);
  // The first whole second after the create ran (bounded by the clock around the call, however slow it was).
  t.ok(next > before && next <= Date.now() + 1000 && next % 1000 === 0, 'next_run_at is the next second');
  // A loaded machine can fire the next slot before the first slot's retry, so the retry is found by its id.
  const retried = () => rx.hits.filter((h) => h.headers['webhook-id'] === rx.hits[0].headers['webhook-id']);
  await until('the first run retried and a second run', () => rx.hits.length >= 3 && retried().length >= 2);
  const secret = await accountSecret(app, a.auth);
  for (const h of rx.hits) t.same(verify(secret, h), { job: 'tick' }, 'standardwebhooks verifies the run');
  t.equal(retried().length, 2, 'the retry of a run keeps its webhook-id');
  t.equal(new Set(rx.hits.map((h) => h.headers['webhook-id'])).size, rx.hits.length - 1, 'other runs have their own');
  t.equal(rx.hits[0].headers['webhook-event-type'], 'cron.run');
  // The first run's retry has reached the receiver; its outcome is written when the answer comes back.
  await until('the first run and another settled', async () => {
    const settled = (await runs(app, a.auth, c.cron_id)).filter((r: any) => r.state === 'succeeded');
    return settled.length >= 2 && settled.some((r: any) => r.run_id === rx.hits[0].headers['webhook-id']);
  });
  const list = await runs(app, a.auth, c.cron_id);
  const first = list[list.length - 1];
  t.equal(first.run_id, rx.hits[0].headers['webhook-id']);
  t.same(
    first.attempts.map((x: any) => [x.attempt, x.status, x.response_code]),
    [
      [1, 'failed', 500],
      [2, 'succeeded', 200],
    ]
  );
  t.ok(first.attempts.every((x: any) => Number.isInteger(x.duration_ms)));
  t.equal(new Date(first.scheduled_for).getUTCMilliseconds(), 0, 'a run is for a whole-second slot');
  const slots = list.map((r: any) => r.scheduled_for);
  t.equal(new Set(slots).size, slots.length, 'one run a slot');
  const got = (await app.inject({ method: 'GET', url: `/v1/scheduling/cron/${c.cron_id}`, headers: a.auth })).json();
  t.ok(Date.parse(got.next_run_at) > Date.parse(first.scheduled_for), 'next_run_at moves on');
  t.ok(got.last_run_at);
});

t.test('schedules are read in the IANA zone given', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const c = (
    await create(app, a.auth, {
      name: 'ny',
      schedule: '30 9 * * *',
      timezone: 'America/New_York',
      url: 'http://127.0.0.1:9/x',
    })
  ).json();
  const at = new Date(c.next_run_at);
  const local = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/New_York',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  }).format(at);
  t.equal(local, '09:30');
  t.ok(at.getTime() > Date.now() && at.getTime() <= Date.now() + 86_400_000);
  const list = (await app.inject({ method: 'GET', url: '/v1/scheduling/cron', headers: a.auth })).json();
  t.equal(list.items.length, 1);
  t.equal(list.next_cursor, null);
});

t.test('bad input is 400 naming the field, and nothing is scheduled', async (t) => {
  const { app } = await makeApp(t, {
    ...FAST,
    egress: { allow_private: false },
    plugins: { scheduling: { max_payload_bytes: 500 } },
  });
  const a = await activate(app);
  const ok = { name: 'x', schedule: '*/5 * * * *', url: 'https://93.184.216.34/hook' };
  const cases: [Record<string, unknown>, number, string, RegExp][] = [
    [{ ...ok, schedule: '61 * * * *' }, 400, 'schedule', /not a valid cron expression/],
    [{ ...ok, schedule: 'every day' }, 400, 'schedule', /not a valid cron expression/],
    [{ ...ok, schedule: '0 0 30 2 *' }, 400, 'schedule', /never fires/],
    [{ ...ok, timezone: 'Mars/Olympus_Mons' }, 400, 'timezone', /IANA/],
    [{ ...ok, url: 'gopher://example.com/' }, 400, 'url', /http or https/],
    [{ ...ok, url: 'http://10.0.0.1/hook' }, 400, 'url', /private/],
    [{ ...ok, url: 'http://127.0.0.1:8080/' }, 400, 'url', /loopback/],
    [{ ...ok, payload: { blob: 'y'.repeat(600) } }, 413, 'payload', /500 bytes/],
    [{ ...ok, retries: -1 }, 400, 'retries', /.*/],
    [{ ...ok, timeout_seconds: 5000 }, 400, 'timeout_seconds', /at most 900/],
    [{ name: 'x', url: ok.url }, 400, 'schedule', /required/],
  ];
  for (const [body, status, param, msg] of cases) {
    const res = await create(app, a.auth, body);
    t.equal(res.statusCode, status, JSON.stringify(body).slice(0, 90));
    t.equal(res.json().error.param, param);
    t.match(res.json().error.message, msg);
  }
  t.equal((await app.svc.db.selectFrom('cron_jobs').select('cron_id').execute()).length, 0);
  t.equal(
    (await app.svc.db.selectFrom('jobs').select('job_id').where('kind', 'like', 'scheduling.%').execute()).length,
    0
  );
});

t.test('PATCH enables, disables and reschedules; DELETE removes; other accounts get 404', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const b = await activate(app);
  const rx = await receiver(t);
  const c = (await create(app, a.auth, { name: 'p', schedule: '0 0 1 1 *', url: rx.url, enabled: false })).json();
  t.equal(c.enabled, false);
  t.equal(c.next_run_at, undefined, 'a disabled job has no next run');
  const patch = (id: string, auth: any, payload: unknown) =>
    app.inject({ method: 'PATCH', url: `/v1/scheduling/cron/${id}`, headers: auth, payload });

  const bad = await patch(c.cron_id, a.auth, { schedule: '* * * 13 *' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.param, 'schedule');
  t.equal((await patch(c.cron_id, a.auth, {})).statusCode, 400, 'an empty patch');

  const on = (await patch(c.cron_id, a.auth, { enabled: true, schedule: '* * * * * *', name: 'every second' })).json();
  t.match(on, { enabled: true, name: 'every second', schedule: '* * * * * *' });
  t.ok(on.next_run_at);
  await rx.waitFor(1);
  const off = (await patch(c.cron_id, a.auth, { enabled: false })).json();
  t.equal(off.next_run_at, undefined);
  // A tick or run claimed before the PATCH may still deliver: wait for them, not for a guess at how long.
  await until('no tick running and no run in flight', async () => {
    const { kinds } = await app.svc.jobs.metrics();
    const tick = kinds['scheduling.cron.tick'];
    const run = kinds['scheduling.cron.run'];
    return (tick?.running ?? 0) === 0 && (run?.queued ?? 0) === 0 && (run?.running ?? 0) === 0;
  });
  const seen = rx.hits.length;
  // A window longer than a slot: an enabled job would fire in it, however late the timers.
  await new Promise((r) => setTimeout(r, 1300));
  t.equal(rx.hits.length, seen, 'nothing fires while disabled');

  for (const [method, url, payload] of [
    ['GET', `/v1/scheduling/cron/${c.cron_id}`, undefined],
    ['PATCH', `/v1/scheduling/cron/${c.cron_id}`, { enabled: true }],
    ['DELETE', `/v1/scheduling/cron/${c.cron_id}`, undefined],
    ['GET', `/v1/scheduling/cron/${c.cron_id}/runs`, undefined],
  ] as const) {
    const res = await app.inject({ method, url, headers: b.auth, ...(payload ? { payload } : {}) });
    t.equal(res.statusCode, 404, `${method} ${url} by another account`);
  }
  t.equal((await app.inject({ method: 'GET', url: '/v1/scheduling/cron', headers: b.auth })).json().items.length, 0);
  t.equal(
    (await app.inject({ method: 'GET', url: `/v1/scheduling/cron/${c.cron_id}`, headers: a.auth })).json().enabled,
    false,
    'unchanged by the other account'
  );

  const del = await app.inject({ method: 'DELETE', url: `/v1/scheduling/cron/${c.cron_id}`, headers: a.auth });
  t.same(del.json(), { ok: true });
  t.equal(
    (await app.inject({ method: 'GET', url: `/v1/scheduling/cron/${c.cron_id}`, headers: a.auth })).statusCode,
    404
  );
});

t.test('after downtime each slot inside the catch-up window runs once, late', async (t) => {
  const { app, config } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t);
  const c = (await create(app, a.auth, { name: 'm', schedule: '* * * * * *', url: rx.url })).json();
  await rx.waitFor(1);
  await app.close();
  const down = Date.now();
  await new Promise((r) => setTimeout(r, 3500)); // three or four slots go by with no gateway
  const again = await buildApp(config);
  t.teardown(() => again.close());
  await again.ready();
  const up = Date.now();
  t.ok(up - down >= 3000, 'at least three slots passed while down');
  await until('caught up after the restart', async () => {
    const got = await again.inject({ method: 'GET', url: `/v1/scheduling/cron/${c.cron_id}`, headers: a.auth });
    return Date.parse(got.json().next_run_at) > up;
  });
  const all = await runs(again, a.auth, c.cron_id);
  const slots = all.map((r: any) => Date.parse(r.scheduled_for)).sort((x: number, y: number) => x - y);
  t.same(
    slots.map((s: number) => s - slots[0]),
    slots.map((_: number, i: number) => i * 1000),
    `one run for every slot from the first, none skipped, none twice (${all.map((r: any) => r.scheduled_for).join(', ')})`
  );
  const late = all.filter((r: any) => Date.parse(r.created_at) >= up && Date.parse(r.scheduled_for) < down + 3000);
  t.ok(late.length >= 2, 'the slots that passed while down ran after the restart');
  t.notOk(
    all.some((r: any) => r.state === 'missed'),
    'none missed: they were inside the window'
  );
});

t.test('each attempt of a run is cut at the per-run timeout and retried', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t, async (h) => {
    if (h.n === 1) await new Promise((r) => setTimeout(r, 2500)); // longer than the 1 s timeout
    return { status: 200 };
  });
  const c = (
    await create(app, a.auth, { name: 'slow', schedule: '* * * * * *', url: rx.url, timeout_seconds: 1, retries: 1 })
  ).json();
  await until('the first run settles', async () => {
    const list = await runs(app, a.auth, c.cron_id);
    return list.length > 0 && list[list.length - 1].state === 'succeeded';
  });
  await app.inject({
    method: 'PATCH',
    url: `/v1/scheduling/cron/${c.cron_id}`,
    headers: a.auth,
    payload: { enabled: false },
  });
  const list = await runs(app, a.auth, c.cron_id);
  const first = list[list.length - 1];
  t.equal(first.attempts.length, 2);
  t.match(first.attempts[0], { attempt: 1, status: 'failed', response_code: null, error: /fetch_timeout/ });
  t.ok(
    first.attempts[0].duration_ms >= 900 && first.attempts[0].duration_ms < 2400,
    `cut at about 1 s (${first.attempts[0].duration_ms} ms)`
  );
  t.match(first.attempts[1], { attempt: 2, status: 'succeeded', response_code: 200 });
});

t.test('the cron list pages newest first with a cursor', async (t) => {
  const { app } = await makeApp(t, FAST);
  const a = await activate(app);
  const ids = [];
  for (let i = 0; i < 3; i++) {
    ids.push(
      (
        await create(app, a.auth, { name: `c${i}`, schedule: '0 0 1 1 *', url: 'http://127.0.0.1:9/', enabled: false })
      ).json().cron_id
    );
    await new Promise((r) => setTimeout(r, 3)); // distinct created_at, so "newest first" is the creation order
  }
  const one = (await app.inject({ method: 'GET', url: '/v1/scheduling/cron?limit=2', headers: a.auth })).json();
  t.same(
    one.items.map((c: any) => c.cron_id),
    [ids[2], ids[1]]
  );
  t.type(one.next_cursor, 'string');
  const two = (
    await app.inject({ method: 'GET', url: `/v1/scheduling/cron?limit=2&cursor=${one.next_cursor}`, headers: a.auth })
  ).json();
  t.same(
    two.items.map((c: any) => c.cron_id),
    [ids[0]]
  );
  t.equal(two.next_cursor, null);
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/scheduling/cron?cursor=junk', headers: a.auth })).statusCode,
    400
  );
});
