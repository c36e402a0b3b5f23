import t, { type Test } from 'tap';
import { setClock } from '../../../core/clock.js';
import { cronTickHandler } from '../../../plugins/scheduling/cron-jobs.js';
import type { Deps } from '../../../plugins/scheduling/common.js';
import { makeApp, activate } from '../../helpers/app.js';

// Issue 27: under load a cron tick that ran more than one period late moved the job to the slot
// after *now*, so the slots between never ran and nothing said so. A late slot now runs, once,
// within the catch-up window, and the slots it fell behind follow; a slot older than the window
// is recorded as `missed`. A fake clock (core/clock.ts) sets how late each tick is: the tick
// jobs are due in 2031, so the engine leaves them to the test, which runs the tick handler.

const T0 = Date.UTC(2031, 0, 1, 0, 0, 0, 300);

async function setup(t: Test, scheduling: Record<string, unknown> = {}) {
  let clock = T0;
  t.teardown(setClock(() => clock));
  const { app } = await makeApp(t, { plugins: { scheduling } });
  const a = await activate(app);
  const created = await app.inject({
    method: 'POST',
    url: '/v1/scheduling/cron',
    headers: a.auth,
    payload: { name: 'every second', schedule: '* * * * * *', url: 'http://127.0.0.1:9/cron' },
  });
  const cron = created.json();
  const cfg = app.svc.areas.find((x) => x.def.name === 'scheduling')!.config;
  const tick = cronTickHandler({ svc: app.svc, cfg } as unknown as Deps);
  return {
    app,
    cron,
    at: (ms: number) => (clock = ms),
    tick: (slot: number) =>
      tick({
        id: `tick-${slot}`,
        kind: 'scheduling.cron.tick',
        payload: { cron_id: cron.cron_id, slot },
        attempt: 1,
        maxAttempts: 20,
        runAt: slot,
        signal: new AbortController().signal,
      }),
    nextRunAt: async () =>
      Number(
        (
          await app.svc.db
            .selectFrom('cron_jobs')
            .select('next_run_at')
            .where('cron_id', '=', cron.cron_id)
            .executeTakeFirstOrThrow()
        ).next_run_at
      ),
    runs: async () =>
      (await app.inject({ method: 'GET', url: `/v1/scheduling/cron/${cron.cron_id}/runs?limit=200`, headers: a.auth }))
        .json()
        .items.map((r: any) => ({ slot: Date.parse(r.scheduled_for), state: r.state, missed_until: r.missed_until }))
        .sort((x: any, y: any) => x.slot - y.slot),
  };
}

const S = T0 + 700; // the first whole second after T0

t.test('a tick late by several periods runs its slot and each slot it fell behind, once', async (t) => {
  const c = await setup(t);
  t.equal(Date.parse(c.cron.next_run_at), S, 'created on the fake clock');
  c.at(S + 2500);
  await c.tick(S);
  t.equal(await c.nextRunAt(), S + 3000, 'the job waits for the slot still to come');
  await c.tick(S); // the same tick again (a retry, another node): nothing
  await c.tick(S + 1000);
  t.same(
    (await c.runs()).map((r: any) => [r.slot - S, r.state]),
    [
      [0, 'running'],
      [1000, 'running'],
      [2000, 'running'],
    ],
    'one run for each slot, late or not, never two'
  );
  const job = await c.app.svc.db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('kind', '=', 'scheduling.cron.run')
    .executeTakeFirstOrThrow();
  t.equal(Number(job.n), 3, 'three run jobs');
});

t.test('slots older than the catch-up window are recorded as missed; the chain resumes inside it', async (t) => {
  const c = await setup(t);
  c.at(S + 200_000); // 200 s late; the window is one period, at least 60 s
  await c.tick(S);
  const resume = S + 140_000;
  t.equal(await c.nextRunAt(), resume, 'resumes at the first slot inside the last 60 s');
  await c.tick(resume);
  const runs = await c.runs();
  t.same(runs[0], { slot: S, state: 'missed', missed_until: new Date(resume).toISOString() });
  t.same(
    runs.slice(1).map((r: any) => [r.slot - resume, r.state]),
    Array.from({ length: 61 }, (_, i) => [i * 1000, 'running']),
    'then every slot inside the window runs, once'
  );
  t.equal(await c.nextRunAt(), S + 201_000, 'and the job waits for the next slot to come');
});

t.test('cron_catch_up_seconds sets the window', async (t) => {
  const c = await setup(t, { cron_catch_up_seconds: 5 });
  c.at(S + 7500);
  await c.tick(S);
  t.equal(await c.nextRunAt(), S + 3000, 'slots before now - 5 s are missed');
  t.same(
    (await c.runs()).map((r: any) => [r.slot - S, r.state]),
    [[0, 'missed']]
  );
  await c.tick(S + 3000);
  t.same(
    (await c.runs()).map((r: any) => [r.slot - S, r.state]),
    [
      [0, 'missed'],
      [3000, 'running'],
      [4000, 'running'],
      [5000, 'running'],
      [6000, 'running'],
      [7000, 'running'],
    ]
  );
  t.equal(await c.nextRunAt(), S + 8000);
});
