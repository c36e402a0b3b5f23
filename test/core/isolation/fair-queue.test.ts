import t from 'tap';
import { FairQueue } from '../../../core/isolation/fair-queue.js';
import { ApiError } from '../../../core/errors.js';

// The queue in front of every CPU-heavy engine: fair per account (round robin), bounded per
// account (running and waiting), abortable while waiting and while running. Jobs here are
// promises the test settles by hand, so every assertion is about order, never about time.

interface Gate {
  started: boolean;
  signal?: AbortSignal;
  open: (v?: unknown) => void;
  fail: (e: unknown) => void;
}

/** A job that starts when the queue runs it and ends when the test opens its gate; `order` records starts. */
function gated(order: string[], name: string): { gate: Gate; work: (s: AbortSignal) => Promise<unknown> } {
  const gate: Gate = { started: false, open: () => {}, fail: () => {} };
  const work = (signal: AbortSignal) =>
    new Promise((resolve, reject) => {
      gate.started = true;
      gate.signal = signal;
      order.push(name);
      gate.open = (v) => resolve(v ?? name);
      gate.fail = reject;
    });
  return { gate, work };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

t.test("one account's many queued jobs do not make another account's one job wait behind them", async (t) => {
  const q = new FairQueue({ concurrency: 1 });
  const order: string[] = [];
  const gates: Gate[] = [];
  const done: Promise<unknown>[] = [];
  for (let i = 0; i < 100; i++) {
    const { gate, work } = gated(order, `a${i}`);
    gates.push(gate);
    done.push(q.add('acct_a', work));
  }
  const b = gated(order, 'b0');
  const bDone = q.add('acct_b', b.work);
  t.equal(q.pending, 1);
  t.equal(q.size, 100, 'a1..a99 and b0 wait');
  gates[0].open();
  await done[0];
  await tick();
  t.same(order, ['a0', 'b0'], "b's job runs next, not after a's 99 others");
  b.gate.open();
  t.equal(await bDone, 'b0');
  for (let i = 1; i < 100; i++) {
    await until(() => gates[i].started);
    gates[i].open();
  }
  await Promise.all(done);
  await q.onIdle();
  t.equal(q.size + q.pending, 0);
});

t.test('accounts are served in turn, at most perAccount of one account running', async (t) => {
  const q = new FairQueue({ concurrency: 3, perAccount: 2 });
  const order: string[] = [];
  const all: Record<string, Gate> = {};
  const done: Promise<unknown>[] = [];
  for (const name of ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'c1']) {
    const { gate, work } = gated(order, name);
    all[name] = gate;
    done.push(q.add(name[0], work));
  }
  t.same(order, ['a1', 'a2', 'b1'], 'a is held at 2 running; the third slot goes to b');
  t.same(q.sizeOf('a'), { waiting: 2, running: 2 });
  all.a1.open();
  await done[0];
  await tick();
  t.same(order, ['a1', 'a2', 'b1', 'c1'], 'the freed slot goes to c, which has not been served yet');
  all.b1.open();
  await done[4];
  await tick();
  t.same(order.slice(4), ['a3'], 'then a again (b was served more recently)');
  for (const name of ['a2', 'c1', 'a3']) all[name].open();
  await until(() => all.a4.started && all.b2.started);
  all.a4.open();
  all.b2.open();
  await Promise.all(done);
  await q.onIdle();
});

t.test('an account over maxQueuedPerAccount waiting is refused at once with 429, others are not', async (t) => {
  const q = new FairQueue({ concurrency: 1, maxQueuedPerAccount: 2 });
  const order: string[] = [];
  const first = gated(order, 'a0');
  const firstDone = q.add('a', first.work);
  const waiting = [q.add('a', gated(order, 'a1').work), q.add('a', gated(order, 'a2').work)];
  const refused = await q.add('a', gated(order, 'a3').work).catch((e) => e);
  t.ok(refused instanceof ApiError);
  t.equal(refused.status, 429);
  t.equal(refused.code, 'rate_limited');
  t.equal(refused.headers['retry-after'], '1');
  t.match(refused.message, /cap is 2/);
  t.equal(q.size, 2, 'the refused job is not queued');
  const other = gated(order, 'b0');
  const otherDone = q.add('b', other.work);
  t.equal(q.size, 3, 'another account still queues');
  q.clear();
  for (const w of waiting) t.equal((await w.catch((e) => e)).name, 'AbortError', 'clear() refuses waiting jobs');
  t.equal((await otherDone.catch((e) => e)).name, 'AbortError');
  t.equal(q.size, 0);
  t.equal(q.pending, 1, 'clear() leaves the running job');
  first.gate.open();
  await firstDone;
  await q.onIdle();
  t.same(order, ['a0']);
});

t.test(
  'aborting a waiting job drops it; aborting a running job aborts its signal and frees the slot on settle',
  async (t) => {
    const q = new FairQueue({ concurrency: 1 });
    const order: string[] = [];
    const running = gated(order, 'r');
    const runCtl = new AbortController();
    const runDone = q.add('a', running.work, { signal: runCtl.signal });
    const waitCtl = new AbortController();
    const waitDone = q.add('a', gated(order, 'w').work, { signal: waitCtl.signal });
    const next = gated(order, 'n');
    const nextDone = q.add('b', next.work);
    waitCtl.abort(new Error('caller went away'));
    t.match(await waitDone.catch((e) => e), { message: 'caller went away' });
    t.equal(q.size, 1);
    runCtl.abort(new Error('deadline'));
    t.ok(running.gate.signal?.aborted, "the running work's signal is aborted");
    t.match(await runDone.catch((e) => e), { message: 'deadline' }, 'the caller is answered at once');
    t.equal(q.pending, 1, 'the slot stays taken until the work has stopped');
    t.same(order, ['r']);
    running.gate.fail(new Error('stopped'));
    await until(() => next.gate.started);
    t.same(order, ['r', 'n'], 'the aborted waiting job never ran');
    next.gate.open();
    await nextDone;
    await q.onIdle();
    const pre = new AbortController();
    pre.abort(new Error('already'));
    t.match(await q.add('a', async () => 1, { signal: pre.signal }).catch((e) => e), { message: 'already' });
  }
);

t.test('a job that throws synchronously rejects its call and frees its slot', async (t) => {
  const q = new FairQueue({ concurrency: 1 });
  const boom = q.add('a', () => {
    throw new Error('sync');
  });
  t.match(await boom.catch((e) => e), { message: 'sync' });
  t.equal(await q.add('a', async () => 2), 2);
  await q.onIdle();
  t.throws(() => new FairQueue({ concurrency: 0 }), /concurrency/);
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await tick();
}
