// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import pino from 'pino';
import chromiumVendor from '../../../vendors/chromium/index.js';
import { findChromium } from '../../../vendors/chromium/executable.js';
import type { FetchedResource, ResourceFetcher } from '../../../core/capabilities/pdf.js';
import { captureLog } from '../../helpers/log-lines.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { chromiumChildren, instance, render } from '../../helpers/chromium-render.js';

// Cases that each launch Chromium (behind the egress proxy): past tap's 120 s a file when four files share
// two cores in CI.
t.setTimeout(300_000);

// The warm pool's browsers: a killed browser replaced on the next job, browsers recycled, closed
// with the instance, and no executable meaning no capability. Its queue is pool-queue.test.ts's.

const EMPTY: FetchedResource = { status: 404, headers: {}, body: Buffer.alloc(0) };

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
  const inst = await chromiumVendor.create(cfg, { ...vendorContext('chromium', t), instanceId: 'c' });
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
    inst = await chromiumVendor.create(cfg, {
      ...vendorContext('chromium', t),
      log: pino({ level: 'info' }, log.stream),
    });
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
  await t.rejects(async () => chromiumVendor.create(cfg, vendorContext('chromium', t)), {
    message: /executable_path \/opt\/nope\/chrome/,
  });
});
