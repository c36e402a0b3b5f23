// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import type { FetchedResource, ResourceFetcher } from '../../../core/capabilities/pdf.js';
import { instance, render } from '../../helpers/chromium-render.js';

// Cases that each launch Chromium (behind the egress proxy): past tap's 120 s a file when four files share
// two cores in CI.
t.setTimeout(300_000);

// The pool's queue: jobs at once bounded by `concurrency`, a per-job timeout, a job whose caller
// left never started. The browsers' own lifecycle is pool.test.ts's (two files, so that neither
// is the suite's last long pole alone).

const EMPTY: FetchedResource = { status: 404, headers: {}, body: Buffer.alloc(0) };

/** A fetcher whose requests wait until released, counting how many wait at once. */
function holdingFetcher() {
  const waiting: (() => void)[] = [];
  const state = { now: 0, max: 0, arrived: 0 };
  let onArrive: (() => void) | undefined;
  const fetchResource: ResourceFetcher = async () => {
    state.now++;
    state.arrived++;
    state.max = Math.max(state.max, state.now);
    onArrive?.();
    await new Promise<void>((r) => waiting.push(r));
    state.now--;
    return EMPTY;
  };
  const arrived = (n: number) =>
    new Promise<void>((r) => {
      const check = () => state.arrived >= n && r();
      onArrive = check;
      check();
    });
  const releaseAll = () => {
    for (const r of waiting.splice(0)) r();
  };
  return { fetchResource, state, arrived, releaseAll };
}

const HELD_PAGE = (i: number) => `<p>job ${i}</p><img src="http://held.test/${i}.png">`;

t.test('concurrency bounds the documents rendered at once', async (t) => {
  // The held jobs' budget runs while `wide` launches a browser of its own, which on a loaded
  // machine can take most of the default 30 s: the bound is what this checks, not the budget.
  const bounded = await instance(t, { concurrency: 2, timeout_seconds: 120 });
  const wide = await instance(t, { concurrency: 8 });
  const held = holdingFetcher();
  const jobs = [0, 1, 2, 3].map((i) => render(bounded, { html: HELD_PAGE(i), fetchResource: held.fetchResource }));
  await held.arrived(2);
  // A reference: a third page of the same kind on an unbounded instance reaching its image
  // shows a page had time to get that far; the bounded queue must still have let only two in.
  const ref = holdingFetcher();
  const refJob = render(wide, { html: HELD_PAGE(9), fetchResource: ref.fetchResource });
  await ref.arrived(1);
  t.equal(held.state.arrived, 2, 'two jobs reached their image; the other two wait in the queue');
  ref.releaseAll();
  await refJob;
  // Release as they come until all four are done.
  const pump = setInterval(held.releaseAll, 20);
  t.teardown(() => clearInterval(pump));
  const out = await Promise.all(jobs);
  t.equal(out.length, 4);
  t.equal(held.state.max, 2, 'never more than two at once');
});

t.test('a job past timeout_seconds fails with a timeout kind; the next job runs', async (t) => {
  // 5 s, not the schema's least (1 s): a job's budget covers a fresh tab's renderer start and its
  // print, which on a loaded 2-core machine (three Chromium test files at once) can pass 1 s.
  const inst = await instance(t, { timeout_seconds: 5, concurrency: 1 });
  const fetchResource: ResourceFetcher = async () => EMPTY;
  const held = holdingFetcher();
  const job = render(inst, { html: HELD_PAGE(0), fetchResource: held.fetchResource, javascript: true });
  await held.arrived(1);
  // Its image is never answered before releaseAll(): a timeout here is the job giving up on its own.
  await t.rejects(job, { name: 'VendorFailure', kind: 'timeout' });
  held.releaseAll();
  const out = await render(inst, { html: '<p>after</p>', fetchResource });
  t.equal(out.pages, 1, 'the queue slot was freed');
});

t.test('a caller gone while its job waits in the queue: it never starts', async (t) => {
  const inst = await instance(t, { concurrency: 1 });
  const held = holdingFetcher();
  const first = render(inst, { html: HELD_PAGE(0), fetchResource: held.fetchResource });
  await held.arrived(1);
  const gone = new AbortController();
  const second = render(inst, { html: HELD_PAGE(1), fetchResource: held.fetchResource }, gone.signal);
  gone.abort();
  await t.rejects(second, { name: 'AbortError' });
  held.releaseAll();
  await first;
  t.equal(held.state.arrived, 1, 'the aborted job never loaded its page');
});
