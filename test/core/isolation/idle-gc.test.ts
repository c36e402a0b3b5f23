import t from 'tap';
import { performance } from 'node:perf_hooks';
import { IdleCollector } from '../../../core/isolation/idle-gc.js';

// database-independent: the collector's rule, with the loop's utilization and the heap given.

function collector(minGrowthBytes = 100) {
  const state = { heap: 1000, utilization: 0, gcs: 0 };
  const elu = performance.eventLoopUtilization();
  const c = new IdleCollector({
    everyMs: 10_000,
    minGrowthBytes,
    gc: () => {
      state.gcs++;
      state.heap = 1000; // what a collection leaves
    },
    heapUsed: () => state.heap,
    utilization: () => ({ now: elu, utilization: state.utilization }),
  });
  return { c, state };
}

t.test('a quiet window after the heap grew: one collection, then none until it grows again', async (t) => {
  const { c, state } = collector();
  t.equal(c.tick(), false, 'nothing grew: no collection');
  state.heap = 1500;
  t.equal(c.tick(), true, 'grown and quiet: collected');
  t.equal(state.gcs, 1);
  t.equal(c.tick(), false, 'quiet, nothing new: not again');
  t.equal(c.tick(), false);
  state.heap = 1050;
  t.equal(c.tick(), false, 'grown less than the threshold');
  state.heap = 1200;
  t.equal(c.tick(), true, 'grown past it again');
  t.equal(c.collections, 2);
});

t.test('a busy window never collects, however much the heap grew', async (t) => {
  const { c, state } = collector();
  state.heap = 50_000;
  state.utilization = 0.4;
  t.equal(c.tick(), false, 'under load');
  state.utilization = 0.06;
  t.equal(c.tick(), false, 'just over the quiet share');
  state.utilization = 0.01;
  t.equal(c.tick(), true, 'then quiet');
  t.equal(state.gcs, 1);
});
