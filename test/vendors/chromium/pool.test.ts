import t from 'tap';
import pino from 'pino';
import chromiumVendor from '../../../vendors/chromium/index.js';
import { findChromium } from '../../../vendors/chromium/executable.js';
import type { FetchedResource, ResourceFetcher } from '../../../core/capabilities/pdf.js';
import { captureLog } from '../../helpers/log-lines.js';
import { chromiumChildren, instance, render } from '../../helpers/chromium-render.js';

// The warm pool: jobs at once bounded by `concurrency`, a per-job timeout, a killed browser
// replaced on the next job, browsers recycled, and no executable meaning no capability.

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
  const bounded = await instance(t, { concurrency: 2 });
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
  const running = Date.now();
  await t.rejects(job, { name: 'VendorFailure', kind: 'timeout' });
  t.ok(Date.now() - running < 10_000, 'it gave up near the timeout, its image still unanswered');
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

t.test('a killed browser is replaced on the next job', async (t) => {
  const inst = await instance(t);
  const fetchResource: ResourceFetcher = async () => EMPTY;
  t.equal((await render(inst, { html: '<p>one</p>', fetchResource })).pages, 1);
  const pids = chromiumChildren();
  t.equal(pids.length, 1, 'one browser runs');
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  // The next job may find the browser not yet seen as gone: it then fails as unavailable
  // (the router's failover kind) and the one after runs on a fresh browser.
  const next = await render(inst, { html: '<p>two</p>', fetchResource }).catch((e) => e);
  if (next instanceof Error) {
    t.match(next, { name: 'VendorFailure', kind: 'unavailable' });
    t.equal((await render(inst, { html: '<p>three</p>', fetchResource })).pages, 1);
  } else t.equal(next.pages, 1, 'rendered on a relaunched browser');
  const after = chromiumChildren();
  t.equal(after.length, 1, 'one browser again');
  t.not(after[0], pids[0], 'a new process');
});

t.test('recycle_after replaces the browser after that many documents', async (t) => {
  const inst = await instance(t, { recycle_after: 2, concurrency: 1 });
  const fetchResource: ResourceFetcher = async () => EMPTY;
  const seen = new Set<number>();
  for (let i = 0; i < 5; i++) {
    await render(inst, { html: `<p>${i}</p>`, fetchResource });
    for (const pid of chromiumChildren()) seen.add(pid);
  }
  t.equal(seen.size, 3, 'five documents, two a browser: three browsers in turn');
  t.ok(chromiumChildren().length <= 1, 'the retired ones are gone');
});

t.test('close() ends the browser', async (t) => {
  const cfg = { executable_path: '/usr/bin/chromium', concurrency: 1, timeout_seconds: 30, recycle_after: 0, args: [] };
  const inst = await chromiumVendor.create(cfg, { ...ctx(), instanceId: 'c' });
  await render(inst, { html: '<p>x</p>', fetchResource: async () => EMPTY });
  t.equal(chromiumChildren().length, 1);
  await inst.close?.();
  t.equal(chromiumChildren().length, 0, 'no browser left');
});

t.test('no Chromium on the machine: no capability, one warn line saying how to install it', async (t) => {
  t.equal(findChromium({ PATH: '/nonexistent' }), undefined);
  t.equal(findChromium({ PATH: '/nonexistent', CHROME_PATH: '/usr/bin/chromium' }), '/usr/bin/chromium');
  t.equal(findChromium({ PATH: '/usr/bin' }), '/usr/bin/chromium');
  const saved = { PATH: process.env.PATH, CHROME_PATH: process.env.CHROME_PATH };
  process.env.PATH = '/nonexistent';
  delete process.env.CHROME_PATH;
  const log = captureLog();
  let inst: Awaited<ReturnType<typeof chromiumVendor.create>>;
  try {
    const cfg = { executable_path: '', concurrency: 2, timeout_seconds: 30, recycle_after: 0, args: [] };
    inst = await chromiumVendor.create(cfg, { ...ctx(), log: pino({ level: 'info' }, log.stream) });
  } finally {
    process.env.PATH = saved.PATH;
    if (saved.CHROME_PATH !== undefined) process.env.CHROME_PATH = saved.CHROME_PATH;
  }
  t.same(Object.keys(inst.capabilities), [], 'pdf.render is not served');
  t.equal(log.lines.length, 1);
  t.match(JSON.parse(log.lines[0]), { level: 40, msg: /apt-get install -y chromium/ });
});

t.test('an executable_path that does not exist is a config error at boot', async (t) => {
  const cfg = { executable_path: '/opt/nope/chrome', concurrency: 2, timeout_seconds: 30, recycle_after: 0, args: [] };
  await t.rejects(async () => chromiumVendor.create(cfg, ctx()), { message: /executable_path \/opt\/nope\/chrome/ });
});

function ctx() {
  return {
    instanceId: 'chromium',
    fetch,
    publicUrl: 'http://127.0.0.1',
    dataDir: '/tmp',
    log: pino({ level: 'silent' }),
  };
}
