import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import { meterCall, scriptedApp } from '../../helpers/scripted-app.js';
import { newId } from '../../../core/ids.js';
import { BATCH } from '../../../core/retention/retention.js';

const DAY = 86_400_000;
const TODAY = Math.floor(Date.now() / DAY) * DAY;

function usage(app: FastifyInstance, who: Activated, query: string) {
  return app.inject({ method: 'GET', url: `/v1/account/usage${query}`, headers: who.auth }).then((r) => r.json());
}

/** Every report the checks compare: whole-day ranges over the rolled-up and the kept days, and the default. */
async function reports(app: FastifyInstance, who: Activated) {
  const out: unknown[] = [];
  const ranges = [
    [TODAY - 120 * DAY, TODAY + DAY],
    [TODAY - 95 * DAY, TODAY - 85 * DAY],
    [TODAY - 91 * DAY, TODAY - 90 * DAY],
  ];
  for (const [from, to] of ranges) {
    for (const g of ['day', 'capability']) {
      out.push(
        await usage(app, who, `?group_by=${g}&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`)
      );
    }
  }
  const recent = await usage(app, who, '?group_by=capability');
  out.push({ items: recent.items, total_usd: recent.total_usd });
  return out;
}

t.test('the next round is queued at start, and each round queues the one after', async (t) => {
  const startedIn = Math.floor(Date.now() / 60_000) * 60_000;
  const { app } = await makeApp(t, { retention: { interval_seconds: 60 } });
  const db = app.svc.db;
  const rounds = () =>
    db.selectFrom('jobs').selectAll().where('kind', '=', 'core.retention').orderBy('run_at').execute();
  // The minute after the one the app started in (the start may straddle a minute).
  const slot = Number((await rounds())[0]?.unique_key.split(':')[1]);
  t.ok(slot === startedIn + 60_000 || slot === Math.floor(Date.now() / 60_000) * 60_000 + 60_000, 'the next minute');
  t.match(await rounds(), [{ state: 'queued', unique_key: `core.retention:${slot}`, run_at: slot }]);
  // Its time comes (moved forward rather than waited for): it runs and queues the next.
  await db.updateTable('jobs').set({ run_at: Date.now() }).where('kind', '=', 'core.retention').execute();
  app.svc.jobs.wake('core.retention');
  let rows: any[] = [];
  for (let i = 0; i < 500 && !rows.some((r) => r.state === 'done'); i++) {
    await new Promise((r) => setTimeout(r, 20));
    rows = await rounds();
  }
  t.match(rows, [
    { state: 'done', unique_key: `core.retention:${slot}` },
    { state: 'queued', unique_key: `core.retention:${slot + 60_000}`, run_at: slot + 60_000 },
  ]);
});

t.test('ledger retention: old usage entries rolled up, reports and balances unchanged', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'v', price_micros: 1_000 },
    { id: 'w', price_micros: 2_500, capabilities: ['test.send'] },
  ]);
  const me = await activate(app);
  const other = await activate(app);
  for (let i = 0; i < 4; i++) t.equal((await meterCall(app, me.auth, { input: `r${i}` })).statusCode, 200);
  for (let i = 0; i < 2; i++)
    t.equal((await meterCall(app, me.auth, { input: `s${i}`, vendor: 'w' }, 'send')).statusCode, 200);
  t.equal((await meterCall(app, other.auth, { input: 'o' })).statusCode, 200);
  const db = app.svc.db;
  // The real entries moved back in time: two past the retention (90 days), one just inside it.
  const real = await db
    .selectFrom('wallet_ledger')
    .select('entry_id')
    .where('kind', '=', 'usage')
    .orderBy('created_at')
    .execute();
  const ages = [100 * DAY + 5, 95 * DAY + 3_600_000, 90 * DAY + 60_000, 89 * DAY, 2 * DAY, 0, 91 * DAY];
  for (const [i, r] of real.entries())
    await db
      .updateTable('wallet_ledger')
      .set({ created_at: TODAY - ages[i] + 1_000 })
      .where('entry_id', '=', r.entry_id)
      .execute();
  // More than a batch of old entries (and some without a capability), plus a top-up that must stay.
  const bulk = Array.from({ length: BATCH + 500 }, (_, i) => ({
    entry_id: newId('led'),
    account_id: me.account_id,
    amount_micros: -(i % 7) - 1,
    kind: 'usage',
    ref: null,
    capability: i % 5 === 0 ? null : 'test.run',
    vendor: 'v',
    quantity: null,
    created_at: TODAY - (91 + (i % 20)) * DAY + i * 1000,
  }));
  for (let i = 0; i < bulk.length; i += 250)
    await db
      .insertInto('wallet_ledger')
      .values(bulk.slice(i, i + 250))
      .execute();
  await db
    .insertInto('wallet_ledger')
    .values({
      entry_id: newId('led'),
      account_id: me.account_id,
      amount_micros: 5_000_000,
      kind: 'topup',
      ref: 'x',
      capability: null,
      vendor: null,
      quantity: null,
      created_at: TODAY - 200 * DAY,
    })
    .execute();

  const before = { me: await reports(app, me), other: await reports(app, other) };
  const balances = [await app.svc.wallet.balance(me.account_id), await app.svc.wallet.balance(other.account_id)];
  const cutoff = TODAY - 90 * DAY;
  const old = await db
    .selectFrom('wallet_ledger')
    .select('entry_id')
    .where('kind', '=', 'usage')
    .where('created_at', '<', cutoff)
    .execute();
  t.ok(old.length > BATCH, 'more old entries than a batch');

  const removed = await app.svc.retention.run();
  t.equal(removed.ledger, old.length, 'every old usage entry removed');
  t.same(
    await db
      .selectFrom('wallet_ledger')
      .select('entry_id')
      .where('kind', '=', 'usage')
      .where('created_at', '<', cutoff)
      .execute(),
    []
  );
  t.equal(
    (
      await db
        .selectFrom('wallet_ledger')
        .select('entry_id')
        .where('created_at', '>=', cutoff)
        .where('kind', '=', 'usage')
        .execute()
    ).length,
    3,
    'recent entries stay'
  );
  t.equal(
    (
      await db
        .selectFrom('wallet_ledger')
        .select('entry_id')
        .where('kind', '=', 'topup')
        .where('created_at', '<', cutoff)
        .execute()
    ).length,
    1,
    'money history stays'
  );

  const after = { me: await reports(app, me), other: await reports(app, other) };
  t.same(after, before, 'every usage report identical');
  t.ok((before.me[0] as any).items.length > 15, 'the reports cover many days');
  t.same(
    [await app.svc.wallet.balance(me.account_id), await app.svc.wallet.balance(other.account_id)],
    balances,
    'balances unchanged'
  );

  t.same(
    await app.svc.retention.run(),
    {
      ledger: 0,
      jobs: 0,
      deliveries: 0,
      sms_otp: 0,
      outbox_early: 0,
      observability_errors: 0,
      observability_events: 0,
      observability_metrics: 0,
      observability_flag_audit: 0,
      captcha_spent: 0,
      video_jobs: 0,
      analytics_events: 0,
    },
    'a second round finds nothing'
  );
  t.same({ me: await reports(app, me), other: await reports(app, other) }, before, 'and changes nothing');
});

t.test('deliveries, attempts, cron runs and jobs: old finished rows go, recent and unfinished stay', async (t) => {
  // The jobs engine purges finished jobs on its own (jobs.done_retention_seconds) from its first
  // tick: kept out of the way here, so what is counted is the retention round's alone.
  const { app } = await makeApp(t, { jobs: { done_retention_seconds: 365 * 86_400 } });
  const db = app.svc.db;
  const now = Date.now();
  const old = now - 40 * DAY;
  const recent = now - DAY;
  const delivery = (id: string, state: string, at: number) => ({
    delivery_id: id,
    account_id: 'acc',
    url: 'https://example.com/h',
    payload: '{}',
    event_type: null,
    headers: null,
    secret: null,
    state,
    max_attempts: 3,
    next_attempt_at: null,
    created_at: at,
    updated_at: at,
  });
  await db
    .insertInto('webhook_deliveries')
    .values([
      delivery('d_old_ok', 'delivered', old),
      delivery('d_old_failed', 'failed', old),
      delivery('d_old_retrying', 'retrying', old),
      delivery('d_new', 'delivered', recent),
    ])
    .execute();
  const attempt = (ref: string, n: number, at: number) => ({
    ref_id: ref,
    attempt: n,
    account_id: 'acc',
    status: 'ok',
    response_code: 200,
    duration_ms: 5,
    error: null,
    started_at: at,
  });
  await db
    .insertInto('scheduling_attempts')
    .values([attempt('d_old_ok', 1, old), attempt('d_old_ok', 2, old + 1), attempt('d_new', 1, recent)])
    .execute();
  const run = (id: string, state: string, at: number) => ({
    run_id: id,
    cron_id: 'c',
    account_id: 'acc',
    slot_at: at,
    state,
    created_at: at,
    updated_at: at,
  });
  await db
    .insertInto('cron_runs')
    .values([run('r_old', 'succeeded', old), run('r_old_running', 'running', old), run('r_new', 'failed', recent)])
    .execute();
  const job = (id: string, state: string, at: number) => ({
    job_id: id,
    kind: 'test.none',
    payload: 'null',
    unique_key: null,
    state,
    run_at: at + 10 * DAY * 9,
    attempts: 1,
    max_attempts: 1,
    lease_owner: null,
    lease_until: null,
    last_error: null,
    created_at: at,
    updated_at: at,
  });
  await db
    .insertInto('jobs')
    .values([
      job('j_old_dead', 'dead', now - 8 * DAY),
      job('j_old_done', 'done', now - 8 * DAY),
      job('j_new_dead', 'dead', recent),
      job('j_old_queued', 'queued', now - 8 * DAY),
    ])
    .execute();

  const removed = await app.svc.retention.run();
  t.match(removed, { deliveries: 2, jobs: 2 });
  const ids = async (table: string, col: string) =>
    (await db.selectFrom(table).select(col).orderBy(col).execute()).map((r: any) => r[col]);
  t.same(await ids('webhook_deliveries', 'delivery_id'), ['d_new', 'd_old_retrying']);
  t.same(await ids('scheduling_attempts', 'ref_id'), ['d_new']);
  t.same(await ids('cron_runs', 'run_id'), ['r_new', 'r_old_running']);
  t.same(
    (await ids('jobs', 'job_id')).filter((id: string) => id.startsWith('j_')),
    ['j_new_dead', 'j_old_queued']
  );

  const { app: keepAll } = await makeApp(t, {
    retention: { deliveries_days: 0, jobs_days: 0, ledger_days: 0 },
    plugins: {
      sms: { otp_retention_days: 0 },
      observability: {
        error_retention_days: 0,
        event_retention_days: 0,
        metric_retention_days: 0,
        flag_audit_retention_days: 0,
      },
      video: { retention_days: 0 },
      analytics: { retention_days: 0 },
    },
  });
  await keepAll.svc.db
    .insertInto('webhook_deliveries')
    .values(delivery('d_old_ok', 'delivered', old))
    .execute();
  // Early vendor callbacks no send claimed are not data an operator keeps: they expire after a day whatever
  // the retention settings say.
  // Spent captcha solutions neither: they guard nothing once their challenge expired (at least a day kept).
  t.same(await keepAll.svc.retention.run(), { outbox_early: 0, captcha_spent: 0 }, '0 days keeps everything');
  t.equal((await keepAll.svc.db.selectFrom('webhook_deliveries').select('delivery_id').execute()).length, 1);
});
