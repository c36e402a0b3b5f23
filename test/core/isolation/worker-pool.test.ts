import t from 'tap';
import { WorkerPool } from '../../../core/isolation/worker-pool.js';
import { TaskStopped } from '../../../core/isolation/task-errors.js';
import { BACKGROUND_NICE } from '../../../core/isolation/background-priority.js';
import { VendorFailure } from '../../../core/router/failure.js';
import type { tasks } from './sample-tasks.js';

// The worker pool: tasks run in threads, a runaway one is ended by its caller's abort or its
// deadline and a fresh thread takes the next task, a thread's heap is bounded, errors come back
// as the classes the router knows. Every wait is for an event (a flag the task sets, a promise).

function pool(t: Tap, extra: Partial<ConstructorParameters<typeof WorkerPool>[0]> = {}) {
  const p = new WorkerPool<typeof tasks>({
    name: 'sample',
    caller: import.meta.url,
    module: 'test/core/isolation/sample-tasks',
    concurrency: 1,
    maxMemoryMb: 64,
    ...extra,
  });
  t.teardown(() => p.close());
  return p;
}
type Tap = { teardown(fn: () => unknown): void };

/** A flag the `spin` task raises when it has started (the event loop here keeps turning). */
async function started(flag: SharedArrayBuffer): Promise<void> {
  const view = new Int32Array(flag);
  while (Atomics.load(view, 0) === 0) await new Promise((r) => setImmediate(r));
}

t.test('a task runs in a thread: Buffers in and out, a thread reused', async (t) => {
  const p = pool(t);
  const a = await p.run('acct', 'reverse', { data: Buffer.from('abc') });
  t.ok(Buffer.isBuffer(a.data), 'a Buffer comes back');
  t.equal(a.data.toString(), 'cba');
  t.ok(a.isBuffer, 'the task got a Buffer');
  const { threadId } = await import('node:worker_threads');
  t.not(a.threadId, threadId, 'not on the calling thread');
  const b = await p.run('acct', 'reverse', { data: Buffer.from('xy') });
  t.equal(b.threadId, a.threadId, 'the idle thread is reused');
  t.equal(p.threads, 1);
});

t.test("a runaway task is ended by its caller's abort, and the next task gets a fresh thread", async (t) => {
  const p = pool(t);
  const flag = new SharedArrayBuffer(4);
  const ctl = new AbortController();
  const spinning = p.run('acct_a', 'spin', { started: flag }, { signal: ctl.signal });
  const queued = p.run('acct_b', 'reverse', { data: Buffer.from('ok') });
  await started(flag);
  const first = (await p
    .run('acct_c', 'reverse', { data: Buffer.from('z') }, { signal: AbortSignal.abort() })
    .catch((e) => e)) as Error;
  t.equal(first.name, 'AbortError', 'a call aborted before it starts never runs');
  ctl.abort(new Error('caller gave up'));
  t.match(await spinning.catch((e) => e), { message: 'caller gave up' });
  const next = await queued;
  t.equal(next.data.toString(), 'ko', 'the task queued behind the runaway ran');
  t.equal(p.threads, 1, 'on a fresh thread; the runaway one is gone');
});

t.test('a runaway task is ended at its deadline', async (t) => {
  const p = pool(t);
  const err = await p.run('acct', 'spin', { started: new SharedArrayBuffer(4) }, { timeoutMs: 50 }).catch((e) => e);
  t.ok(err instanceof TaskStopped);
  t.equal(err.name, 'TimeoutError', 'the router classifies it as a timeout');
  t.equal(err.reason, 'timeout');
  t.equal((await p.run('acct', 'reverse', { data: Buffer.from('12') })).data.toString(), '21');
});

t.test('a thread over its heap bound is ended; the task fails, the pool goes on', async (t) => {
  const p = pool(t, { maxMemoryMb: 16 });
  const err = await p.run('acct', 'hog', undefined).catch((e) => e);
  t.ok(err instanceof TaskStopped);
  t.equal(err.reason, 'memory');
  t.match(err.message, /more than 16 MiB/);
  t.equal((await p.run('acct', 'reverse', { data: Buffer.from('ab') })).data.toString(), 'ba');
});

t.test("a task's VendorFailure comes back as one, and the thread stays", async (t) => {
  const p = pool(t);
  const err = await p.run('acct', 'refuse', { message: 'not a PDF' }).catch((e) => e);
  t.ok(err instanceof VendorFailure);
  t.equal(err.kind, 'client_error');
  t.equal(err.status, 422);
  t.equal(err.message, 'not a PDF');
  t.equal(p.threads, 1);
});

t.test("one account's queued tasks do not hold another account's task behind them", async (t) => {
  const p = pool(t);
  const flag = new SharedArrayBuffer(4);
  const ctl = new AbortController();
  const spinning = p.run('acct_a', 'spin', { started: flag }, { signal: ctl.signal }).catch(() => 'stopped');
  const finished: string[] = [];
  const many = Array.from({ length: 5 }, (_, i) =>
    p.run('acct_a', 'reverse', { data: Buffer.from(`a${i}`) }).then(() => finished.push(`a${i}`))
  );
  const other = p.run('acct_b', 'reverse', { data: Buffer.from('b') }).then(() => finished.push('b'));
  await started(flag);
  ctl.abort();
  await spinning;
  await Promise.all([...many, other]);
  t.same(finished, ['b', 'a0', 'a1', 'a2', 'a3', 'a4'], "b's task ran first after the running one");
});

t.test('closing the pool ends a running task and refuses waiting ones', async (t) => {
  const p = pool(t);
  const flag = new SharedArrayBuffer(4);
  const spinning = p.run('acct', 'spin', { started: flag });
  const waiting = p.run('acct', 'reverse', { data: Buffer.from('x') }).catch((e) => e);
  await started(flag);
  await p.close();
  t.match(await spinning.catch((e) => e), { reason: 'closed' });
  t.equal((await waiting).name, 'AbortError');
  t.equal(p.threads, 0);
});

t.test('a task runs below the event loop’s CPU priority (background-priority.ts)', async (t) => {
  const { getPriority } = await import('node:os');
  const p = pool(t);
  t.equal(await p.run('acct', 'priority', {}), BACKGROUND_NICE, 'the thread at the background nice');
  t.equal(getPriority(), 0, 'the calling thread as it was');
});
