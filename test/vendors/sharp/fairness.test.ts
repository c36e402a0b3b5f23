import t from 'tap';
import { SharpEngine } from '../../../vendors/sharp/engine.js';
import { until } from '../../helpers/wait.js';

// Issue 27: another account's small call waited p99 11.5 s behind one account's 100 concurrent
// 40-MP uploads: a lane served its calls first come first served. Order, not time, is checked.

function gated(engine: SharpEngine, started: string[], gates: Array<() => void>, accountId: string, name: string) {
  return engine.run({ signal: new AbortController().signal, accountId }, 'large', async () => {
    started.push(name);
    await new Promise<void>((resolve) => gates.push(resolve));
    return name;
  });
}

t.test("a lane's free slot goes to the next account, not to the rest of one account's burst", async (t) => {
  const engine = new SharpEngine(1);
  t.teardown(() => engine.close());
  const started: string[] = [];
  const gates: Array<() => void> = [];
  const burst = ['a1', 'a2', 'a3', 'a4'].map((n) => gated(engine, started, gates, 'acct_a', n));
  await until('a1 to start', () => gates.length === 1);
  const other = gated(engine, started, gates, 'acct_b', 'b1');
  for (let i = 0; i < 4; i++) {
    await until('a call to hold the slot', () => gates.length === 1);
    gates.shift()!();
  }
  await until('the last call', () => gates.length === 1);
  gates.shift()!();
  await Promise.all([...burst, other]);
  t.same(started, ['a1', 'b1', 'a2', 'a3', 'a4'], 'b1 ran next, not after the whole burst');
});

t.test('an account with its cap of calls waiting in a lane is refused 429 at once; another is not', async (t) => {
  const engine = new SharpEngine(1, 2);
  t.teardown(() => engine.close());
  const started: string[] = [];
  const gates: Array<() => void> = [];
  const held = ['a1', 'a2', 'a3'].map((n) => gated(engine, started, gates, 'acct_a', n));
  await until('a1 to start', () => gates.length === 1);
  await t.rejects(gated(engine, started, gates, 'acct_a', 'a4'), {
    code: 'rate_limited',
    status: 429,
    message: /2 calls waiting/,
  });
  const other = gated(engine, started, gates, 'acct_b', 'b1');
  for (let i = 0; i < 4; i++) {
    await until('a call to hold the slot', () => gates.length === 1);
    gates.shift()!();
  }
  t.same(await Promise.all([...held, other]), ['a1', 'a2', 'a3', 'b1']);
  t.same(started, ['a1', 'b1', 'a2', 'a3'], 'a4 never ran');
});
