import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openDatabase } from '../../../core/db/open.js';
import { migrateModule } from '../../../core/db/migrate.js';
import { jobsMigrations } from '../../../core/jobs/migrations.js';
import { JobsEngine, JobRetry, type JobsConfig } from '../../../core/jobs/engine.js';
import { backoffMs } from '../../../core/jobs/backoff.js';
import { freshDatabaseUrl } from '../../helpers/app.js';
import { sleep, until } from '../../helpers/wait.js';
import { frozenClock } from '../../helpers/clock.js';

const base: JobsConfig = {
  poll_ms: 20,
  lease_ms: 2000,
  concurrency: 8,
  stop_grace_ms: 200,
  done_retention_seconds: 3600,
};

async function databaseUrl(t: any): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-jobs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return freshDatabaseUrl(t, dir);
}

/** An engine on its own connection pool to the database at `url`. */
async function engine(
  t: any,
  url: string,
  cfg: Partial<JobsConfig> = {},
  opts: { soleNode?: boolean } = {}
): Promise<JobsEngine> {
  const d = await openDatabase(url, { poolSize: 4 });
  await migrateModule(d, 'jobs', jobsMigrations);
  const e = new JobsEngine(d.db, d.dialect, { ...base, ...cfg }, pino({ level: 'silent' }), opts);
  t.teardown(async () => {
    await e.stop();
    await d.close();
  });
  return e;
}

t.test('a job runs once with its payload; ids and unique keys de-duplicate', async (t) => {
  const e = await engine(t, await databaseUrl(t));
  const seen: any[] = [];
  e.register('echo', async (job) => {
    seen.push({ id: job.id, payload: job.payload, attempt: job.attempt });
  });
  e.start();
  const a = await e.enqueue({ kind: 'echo', payload: { n: 1 }, uniqueKey: 'slot-1' });
  const again = await e.enqueue({ kind: 'echo', payload: { n: 2 }, uniqueKey: 'slot-1' });
  t.ok(a.created);
  t.same(again, { id: a.id, created: false }, 'the unique key returns the first job');
  const byId = await e.enqueue({ kind: 'echo', payload: { n: 3 }, id: a.id });
  t.same(byId, { id: a.id, created: false });
  await until('done', async () => (await e.get(a.id))?.state === 'done');
  t.same(seen, [{ id: a.id, payload: { n: 1 }, attempt: 1 }]);
  const row = await e.get(a.id);
  t.equal(row!.attempts, 1);
  t.equal(row!.lease_owner, null);
});

t.test('failures retry with backoff, then succeed; the last attempt failing makes it dead', async (t) => {
  const e = await engine(t, await databaseUrl(t));
  const attempts: Record<string, number[]> = {};
  e.register(
    'flaky',
    async (job) => {
      (attempts[job.id] ??= []).push(Date.now());
      if (job.payload.failTimes >= job.attempt) throw new Error(`boom ${job.attempt}`);
    },
    { backoff: (n) => 40 * n }
  );
  e.start();
  const ok = await e.enqueue({ kind: 'flaky', payload: { failTimes: 2 }, maxAttempts: 5 });
  const dead = await e.enqueue({ kind: 'flaky', payload: { failTimes: 99 }, maxAttempts: 3 });
  await until(
    'both settle',
    async () => (await e.get(ok.id))?.state === 'done' && (await e.get(dead.id))?.state === 'dead'
  );
  t.equal(attempts[ok.id].length, 3);
  t.ok(attempts[ok.id][1] - attempts[ok.id][0] >= 35, 'the first retry waited its backoff');
  t.ok(attempts[ok.id][2] - attempts[ok.id][1] >= 75, 'the second waited longer');
  const okRow = await e.get(ok.id);
  t.equal(okRow!.last_error, null);
  const deadRow = await e.get(dead.id);
  t.equal(deadRow!.attempts, 3);
  t.equal(attempts[dead.id].length, 3, 'no attempt after the last');
  t.equal(deadRow!.last_error, 'boom 3');
  const m = await e.metrics();
  t.equal(m.totals.dead, 1);
  t.equal(m.totals.done, 1);
  t.equal(m.node.failed, 5);
  t.equal(m.node.retried, 4);
});

t.test('JobRetry sets the next delay or gives up at once', async (t) => {
  const e = await engine(t, await databaseUrl(t));
  let runs = 0;
  e.register('steer', async (job) => {
    runs++;
    if (job.payload.permanent) throw new JobRetry('gone', { permanent: true });
    if (job.attempt === 1) throw new JobRetry('later', { delayMs: 60_000 });
  });
  e.start();
  const gone = await e.enqueue({ kind: 'steer', payload: { permanent: true }, maxAttempts: 10 });
  const later = await e.enqueue({ kind: 'steer', payload: {}, maxAttempts: 10 });
  // One read of each row a check: two reads of `later` could see it queued before its claim
  // and with its attempt counted after it, while it is still running.
  await until('settled', async () => {
    const [g, l] = [await e.get(gone.id), await e.get(later.id)];
    return g?.state === 'dead' && l?.state === 'queued' && l.attempts === 1;
  });
  const row = await e.get(later.id);
  t.ok(row!.run_at > Date.now() + 55_000, 'run_at follows the handler');
  t.equal(row!.last_error, 'later');
  t.equal((await e.get(gone.id))!.attempts, 1);
  t.equal(runs, 2);
  t.ok(await e.cancel(later.id), 'a queued job can be cancelled');
  t.equal(await e.get(later.id), undefined);
});

t.test('a handler completes its job in its own transaction; rolled back, the job is retried', async (t) => {
  const e = await engine(t, await databaseUrl(t), { poll_ms: 20 });
  await e.db.schema.createTable('effects').addColumn('job_id', 'text').addColumn('attempt', 'integer').execute();
  e.register('own', async (job) => {
    await e.db.transaction().execute(async (trx) => {
      await trx.insertInto('effects').values({ job_id: job.id, attempt: job.attempt }).execute();
      t.equal(await job.completeIn(trx), true, "the lease is this run's");
      // Its commit failing, say: the completion goes back with the effect.
      if (job.payload.fail && job.attempt === 1) throw new Error('the commit failed');
    });
  });
  e.start();
  const ok = await e.enqueue({ kind: 'own', payload: {} });
  const failing = await e.enqueue({ kind: 'own', payload: { fail: true }, maxAttempts: 3 });
  await until('both done', async () => {
    const [a, b] = [await e.get(ok.id), await e.get(failing.id)];
    return a?.state === 'done' && b?.state === 'done';
  });
  t.equal((await e.get(ok.id))!.attempts, 1);
  t.equal((await e.get(failing.id))!.attempts, 2, 'the rolled-back completion did not count');
  t.equal((await e.get(failing.id))!.lease_owner, null);
  const effects = await e.db.selectFrom('effects').selectAll().orderBy('job_id').execute();
  t.same(
    effects.map((r: any) => [r.job_id, Number(r.attempt)]).sort(),
    [
      [ok.id, 1],
      [failing.id, 2],
    ].sort()
  );
  const m = await e.metrics();
  t.equal(m.node.succeeded, 2);
  t.equal(m.node.retried, 1);
});

t.test('concurrency is bounded per kind', async (t) => {
  const e = await engine(t, await databaseUrl(t));
  let now = 0;
  let peak = 0;
  let other = 0;
  e.register(
    'slow',
    async () => {
      peak = Math.max(peak, ++now);
      await sleep(30);
      now--;
    },
    { concurrency: 2 }
  );
  e.register(
    'other',
    async () => {
      other++;
    },
    { concurrency: 1 }
  );
  e.start();
  const ids = [];
  for (let i = 0; i < 10; i++) ids.push((await e.enqueue({ kind: 'slow', payload: i })).id);
  for (let i = 0; i < 3; i++) await e.enqueue({ kind: 'other', payload: i });
  await until('all done', async () => (await e.metrics()).totals.done === 13);
  t.equal(peak, 2);
  t.equal(other, 3, 'a full kind does not hold up another');
});

t.test('an expired lease is claimed again (a node died); a live one is renewed and not', async (t) => {
  const url = await databaseUrl(t);
  const a = await engine(t, url, { lease_ms: 1000 });
  const b = await engine(t, url, { lease_ms: 1000 });
  // Leases are read off a clock the test moves, a step shorter than a lease at a time, each
  // step waiting for the renewal: a loaded machine cannot let a live lease lapse in between.
  const clock = frozenClock(t);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const runs: Record<string, string[]> = {};
  const handler = (who: string) => async (job: any) => {
    (runs[job.id] ??= []).push(`${who}#${job.attempt}`);
    if (job.payload.slow) await released;
  };
  a.register('work', handler('a'));
  b.register('work', handler('b'));
  // A job a dead node had claimed: running, its lease run out.
  const orphan = await a.enqueue({ kind: 'work', payload: {} });
  await a.db
    .updateTable('jobs')
    .set({ state: 'running', lease_owner: 'dead-node:1', lease_until: Date.now() - 1, attempts: 1 })
    .where('job_id', '=', orphan.id)
    .execute();
  // One whose lease is still valid must be left alone.
  const held = await a.enqueue({ kind: 'work', payload: {} });
  await a.db
    .updateTable('jobs')
    .set({ state: 'running', lease_owner: 'live-node:1', lease_until: Date.now() + 60_000, attempts: 1 })
    .where('job_id', '=', held.id)
    .execute();
  const slow = await a.enqueue({ kind: 'work', payload: { slow: true } });
  a.start();
  await until('slow job claimed', async () => (await a.get(slow.id))?.state === 'running');
  b.start();
  for (let step = 0; step < 7; step++) {
    clock.advance(500); // three and a half lease lengths in all: only renewal keeps it
    await until('the lease renewed', async () => Number((await a.get(slow.id))!.lease_until) >= Date.now() + 1000);
  }
  release();
  await until(
    'orphan and slow done',
    async () => (await a.get(orphan.id))?.state === 'done' && (await a.get(slow.id))?.state === 'done'
  );
  t.equal(runs[orphan.id].length, 1);
  t.match(runs[orphan.id][0], /#2$/, 'the reclaim counts as the second attempt');
  t.equal(runs[slow.id].length, 1, 'the renewed lease kept the slow job from running twice');
  t.equal(runs[held.id], undefined);
  t.equal((await a.get(held.id))!.state, 'running');
});

t.test('two engines on one database never run one job twice', async (t) => {
  const url = await databaseUrl(t);
  const a = await engine(t, url, { poll_ms: 10 });
  const b = await engine(t, url, { poll_ms: 10 });
  const count = new Map<string, number>();
  const by = { a: 0, b: 0 };
  const handler = (who: 'a' | 'b') => async (job: any) => {
    count.set(job.id, (count.get(job.id) ?? 0) + 1);
    by[who]++;
    await sleep(job.payload % 3);
  };
  a.register('msg', handler('a'), { concurrency: 4 });
  b.register('msg', handler('b'), { concurrency: 4 });
  a.start();
  b.start();
  const ids: string[] = [];
  for (let i = 0; i < 300; i++) ids.push((await (i % 2 ? a : b).enqueue({ kind: 'msg', payload: i })).id);
  await until('all ran', () => count.size === 300, 30_000);
  await sleep(100);
  t.equal(count.size, 300);
  t.equal([...count.values()].filter((n) => n !== 1).length, 0, 'each job ran exactly once');
  t.ok(by.a > 0 && by.b > 0, `both engines worked (${by.a}/${by.b})`);
  t.equal((await a.metrics()).totals.done, 300);
});

t.test('graceful stop gives back what it holds', async (t) => {
  const e = await engine(t, await databaseUrl(t), { stop_grace_ms: 100 });
  let started = 0;
  let aborted = 0;
  e.register(
    'long',
    async (job) => {
      started++;
      await new Promise<void>((resolve) =>
        job.signal.addEventListener('abort', () => {
          aborted++;
          resolve();
        })
      );
    },
    { concurrency: 1 }
  );
  e.start();
  const first = await e.enqueue({ kind: 'long', payload: 1 });
  await until('first running', () => started === 1);
  const second = await e.enqueue({ kind: 'long', payload: 2 });
  await sleep(50);
  await e.stop();
  t.equal(aborted, 1, 'the running handler was told to stop');
  for (const id of [first.id, second.id]) {
    const row = await e.get(id);
    t.equal(row!.state, 'queued', 'released');
    t.equal(row!.attempts, 0, 'the interrupted attempt does not count');
    t.equal(row!.lease_owner, null);
  }
  t.equal((await e.metrics()).node.released, 1);
});

t.test('a job claimed for its last attempt by a dead node becomes dead', async (t) => {
  const e = await engine(t, await databaseUrl(t));
  let ran = 0;
  const exhausted: unknown[] = [];
  e.register(
    'once',
    async () => {
      ran++;
    },
    {
      onExhausted: async (id, payload, error) => {
        exhausted.push([id, payload, error]);
      },
    }
  );
  const j = await e.enqueue({ kind: 'once', payload: {}, maxAttempts: 2 });
  await e.db
    .updateTable('jobs')
    .set({ state: 'running', lease_owner: 'gone', lease_until: Date.now() - 1, attempts: 2, last_error: 'crashed' })
    .where('job_id', '=', j.id)
    .execute();
  e.start();
  await until('dead', async () => (await e.get(j.id))?.state === 'dead');
  t.equal(ran, 0);
  t.equal((await e.get(j.id))!.last_error, 'crashed');
  t.same(exhausted, [[j.id, {}, 'crashed']], 'the kind hears of it');
});

t.test('metrics report queued, running, failed and lateness', async (t) => {
  const e = await engine(t, await databaseUrl(t));
  e.register('m', async () => {});
  await e.enqueue({ kind: 'm', payload: 1, runAt: Date.now() + 3_600_000 });
  const enqueuedAt = Date.now();
  await e.enqueue({ kind: 'm', payload: 2 });
  e.start();
  await until('one done', async () => (await e.metrics()).totals.done === 1);
  const m = await e.metrics();
  // Late by no more than the time since it was enqueued, however long a loaded machine took.
  const since = Date.now() - enqueuedAt;
  t.same(m.kinds.m, { queued: 1, running: 0, done: 1, dead: 0 });
  t.equal(m.lateness_ms.samples, 1);
  t.ok(m.lateness_ms.p99 >= 0 && m.lateness_ms.p99 <= since, `p99 ${m.lateness_ms.p99} ms, at most ${since}`);
  t.match(m.owner, /:\d+:/);
});

t.test('a claim takes at most its limit however many are due', async (t) => {
  const e = await engine(t, await databaseUrl(t));
  for (let i = 0; i < 50; i++) await e.enqueue({ kind: 'many', payload: i });
  const rows = await e.store.claim('many', 7, 'me', 60_000);
  t.equal(rows.length, 7);
  t.same(
    rows.map((r) => r.attempts),
    Array(7).fill(1)
  );
  t.equal((await e.metrics()).kinds.many.running, 7, 'the database agrees');
  t.equal((await e.store.claim('many', 100, 'other', 60_000)).length, 43, 'the rest, none twice');
});

t.test('backoff grows exponentially with jitter and a cap', async (t) => {
  t.equal(
    backoffMs(1, 1000, 60_000, () => 0),
    500
  );
  t.equal(
    backoffMs(1, 1000, 60_000, () => 1),
    1000
  );
  t.equal(
    backoffMs(4, 1000, 60_000, () => 1),
    8000
  );
  t.equal(
    backoffMs(30, 1000, 60_000, () => 1),
    60_000
  );
  for (let i = 0; i < 100; i++) {
    const d = backoffMs(3);
    t.ok(d >= 2000 && d <= 4000);
  }
});

t.test('a sole node idles without a claim a poll, and still runs new, delayed and retried jobs on time', async (t) => {
  const e = await engine(t, await databaseUrl(t), { poll_ms: 20 }, { soleNode: true });
  const claim = e.store.claim.bind(e.store);
  let claims = 0;
  e.store.claim = (...args: Parameters<typeof claim>) => {
    claims++;
    return claim(...args);
  };
  const ran: Array<{ id: string; attempt: number; at: number }> = [];
  const job = async (j: any) => {
    ran.push({ id: j.id, attempt: j.attempt, at: Date.now() });
    if (j.payload === 'retry' && j.attempt === 1) throw new JobRetry('again', { delayMs: 250 });
  };
  for (const kind of ['a', 'b', 'c']) e.register(kind, job);
  e.start();
  // The first round claims each kind once; a loaded machine may take any time to get there.
  await until('the first claim of each kind', () => claims >= 3);
  const idle = claims;
  t.equal(idle, 3, 'one claim a kind at start');
  // A window for claims that should not come: a poll timer would fire in it however late.
  await sleep(300);
  t.equal(claims, idle, 'no claim while idle, where a poll of 20 ms would have made ~45');

  const now = await e.enqueue({ kind: 'a', payload: 'now' });
  await until('the new job ran', () => ran.some((r) => r.id === now.id), 2000);
  const t0 = Date.now();
  const later = await e.enqueue({ kind: 'b', payload: 'later', runAt: t0 + 300 });
  const retried = await e.enqueue({ kind: 'c', payload: 'retry' });
  await until('the delayed job ran', () => ran.some((r) => r.id === later.id), 3000);
  t.ok(ran.find((r) => r.id === later.id)!.at >= t0 + 300, 'not before its time');
  await until('the retry ran', () => ran.filter((r) => r.id === retried.id).length === 2, 3000);
  const [first, second] = ran.filter((r) => r.id === retried.id);
  t.equal(second.attempt, 2);
  t.ok(second.at - first.at >= 250, `retried after its delay (${second.at - first.at} ms)`);
});
