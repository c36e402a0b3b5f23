// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { FetchedResource, ResourceFetcher } from '../../../core/capabilities/pdf.js';
import type { VendorInstance } from '../../../core/define.js';
import { CHROMIUM, instance, render } from '../../helpers/chromium-render.js';
import { sleep } from '../../helpers/wait.js';

// A slow browser start: it has its own bound, a job's budget starts once it has its browser,
// and a caller that leaves during the start does not wait for it.

const EMPTY: FetchedResource = { status: 404, headers: {}, body: Buffer.alloc(0) };
// The job's budget, and how long the test keeps the browser starting: longer than the budget.
const BUDGET_S = 5;
const LAUNCH_S = BUDGET_S + 1;

/**
 * A Chromium whose start the test ends: a wrapper that counts its launches, waits for `release()`
 * (a file; gone with the test's folder, or after a minute, it gives up), then becomes the real one.
 * An event, not a sleep: a loaded machine cannot make a test's timing race the launch.
 */
function slowChromium(t: any): { path: string; launches: () => number; release: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'slow-chromium-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const count = join(dir, 'launches');
  const go = join(dir, 'go');
  const path = join(dir, 'chromium');
  const wait = `i=0; while [ -d ${dir} ] && [ ! -f ${go} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`;
  writeFileSync(path, `#!/bin/sh\necho x >> ${count}\n${wait}\nexec ${CHROMIUM} "$@"\n`, { mode: 0o755 });
  return {
    path,
    launches: () => readFileSync(count, 'utf8').split('\n').length - 1,
    release: () => writeFileSync(go, ''),
  };
}

/** Renders until one is not cut short by the budget (a fresh tab's first print under load); at most 20 tries. */
async function untilRendered(inst: VendorInstance, fetchResource: ResourceFetcher) {
  for (let i = 0; ; i++) {
    const out = await render(inst, { html: '<p>again</p>', fetchResource }).catch((e) => e);
    if (!(out instanceof Error)) return out;
    if ((out as { kind?: string }).kind !== 'timeout' || i === 19) throw out;
  }
}

t.test('a launch slower than timeout_seconds: the job waits for its browser, then has its whole budget', async (t) => {
  const slow = slowChromium(t);
  const inst = await instance(t, { executable_path: slow.path, timeout_seconds: BUDGET_S, concurrency: 1 });
  const fetchResource: ResourceFetcher = async () => EMPTY;
  let settled = false;
  const first = render(inst, { html: '<p>first</p>', fetchResource })
    .catch((e) => e)
    .finally(() => {
      settled = true;
    });
  // Past the budget with the browser still starting: a clock started with the job would have
  // fired first (a timer due earlier runs earlier, however late both are on a loaded machine).
  await sleep(LAUNCH_S * 1000);
  t.notOk(settled, 'no timeout while the browser was starting');
  const released = Date.now();
  slow.release();
  // The first print on a fresh tab may itself run past the budget on a loaded machine: a
  // timeout then, but one counted from the browser being up, never the launch cut short.
  const out = await first;
  if (out instanceof Error) {
    t.match(out, { name: 'VendorFailure', kind: 'timeout' });
    t.ok(Date.now() - released >= BUDGET_S * 1000 - 100, 'the clock started once the browser was up');
    t.equal((await untilRendered(inst, fetchResource)).pages, 1);
  } else t.equal(out.pages, 1);
  t.equal(slow.launches(), 1, 'one launch');
});

t.test('a caller gone while the browser starts: it returns at once, the launch goes on for the next job', async (t) => {
  const slow = slowChromium(t);
  const inst = await instance(t, { executable_path: slow.path, concurrency: 1 });
  const fetchResource: ResourceFetcher = async () => EMPTY;
  const gone = new AbortController();
  const first = render(inst, { html: '<p>first</p>', fetchResource }, gone.signal);
  setTimeout(() => gone.abort(), 200);
  // The browser cannot be up before release(): rejected now, it did not wait for the launch.
  await t.rejects(first, { name: 'AbortError' });
  slow.release();
  t.equal((await render(inst, { html: '<p>next</p>', fetchResource })).pages, 1);
  t.equal(slow.launches(), 1, 'the launch it left was the one the next job used');
});
