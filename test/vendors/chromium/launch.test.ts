import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { FetchedResource, ResourceFetcher } from '../../../core/capabilities/pdf.js';
import type { VendorInstance } from '../../../core/define.js';
import { CHROMIUM, instance, render } from '../../helpers/chromium-render.js';

// A slow browser start: it has its own bound, a job's budget starts once it has its browser,
// and a caller that leaves during the start does not wait for it.

const EMPTY: FetchedResource = { status: 404, headers: {}, body: Buffer.alloc(0) };
const LAUNCH_S = 2.5;

/** A Chromium that takes LAUNCH_S to start: a wrapper that counts its launches, sleeps, then becomes the real one. */
function slowChromium(t: any): { path: string; launches: () => number } {
  const dir = mkdtempSync(join(tmpdir(), 'slow-chromium-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const count = join(dir, 'launches');
  const path = join(dir, 'chromium');
  writeFileSync(path, `#!/bin/sh\necho x >> ${count}\nsleep ${LAUNCH_S}\nexec ${CHROMIUM} "$@"\n`, { mode: 0o755 });
  return { path, launches: () => readFileSync(count, 'utf8').split('\n').length - 1 };
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
  const inst = await instance(t, { executable_path: slow.path, timeout_seconds: 2, concurrency: 1 });
  const fetchResource: ResourceFetcher = async () => EMPTY;
  const started = Date.now();
  // The first print on a fresh tab may itself run past 2 s on a loaded machine: a timeout then,
  // but one counted from the browser being up (launch + budget), never the launch cut short.
  const first = await render(inst, { html: '<p>first</p>', fetchResource }).catch((e) => e);
  if (first instanceof Error) {
    t.match(first, { name: 'VendorFailure', kind: 'timeout' });
    t.ok(Date.now() - started >= (LAUNCH_S + 2) * 1000 - 100, 'the clock started once the browser was up');
    t.equal((await untilRendered(inst, fetchResource)).pages, 1);
  } else t.equal(first.pages, 1);
  t.equal(slow.launches(), 1, 'one launch');
});

t.test('a caller gone while the browser starts: it returns at once, the launch goes on for the next job', async (t) => {
  const slow = slowChromium(t);
  const inst = await instance(t, { executable_path: slow.path, concurrency: 1 });
  const fetchResource: ResourceFetcher = async () => EMPTY;
  const gone = new AbortController();
  const started = Date.now();
  const first = render(inst, { html: '<p>first</p>', fetchResource }, gone.signal);
  setTimeout(() => gone.abort(), 200);
  await t.rejects(first, { name: 'AbortError' });
  t.ok(Date.now() - started < LAUNCH_S * 1000 - 300, 'it did not wait for the launch');
  t.equal((await render(inst, { html: '<p>next</p>', fetchResource })).pages, 1);
  t.equal(slow.launches(), 1, 'the launch it left was the one the next job used');
});
