// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { BACKGROUND_NICE } from '../../../core/isolation/background-priority.js';
import { chromiumChildren, directFetcher, instance, render } from '../../helpers/chromium-render.js';
import { descendants, niceOf, processThreadNices } from '../../helpers/nice.js';

// Chromium below the event loop: the browser, and every process and thread it starts, at the
// background nice, so a render's layout and printing yield the cores to the gateway's requests.

// A launch on a loaded machine takes seconds.
t.setTimeout(180_000);

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

t.test("a render's browser, renderer and their threads run at the background nice", async (t) => {
  const inst = await instance(t);
  const out = await render(inst, { html: '<h1>Low priority</h1>', fetchResource: directFetcher() });
  t.equal(out.data.subarray(0, 5).toString(), '%PDF-', 'rendered');
  const [browser] = chromiumChildren();
  t.ok(browser, 'the browser is a child of this process');
  const tree = [browser!, ...descendants(browser!)];
  const renderers = tree.filter((pid) => cmdline(pid).includes('--type=renderer'));
  t.ok(renderers.length > 0, 'a renderer process is running (the kept tab)');
  for (const pid of tree) {
    const type = /--type=(\S+)/.exec(cmdline(pid))?.[1] ?? 'browser';
    if (niceOf(pid) === undefined) continue; // ended meanwhile
    t.equal(niceOf(pid), BACKGROUND_NICE, `${type} process ${pid}`);
    const threads = processThreadNices(pid);
    t.same(
      threads,
      threads.map(() => BACKGROUND_NICE),
      `${type} process ${pid}: each of its threads`
    );
  }
  t.equal(niceOf(process.pid), 0, 'the gateway as it was');
});

/** `/autogroup-N nice K` of a process: its session's scheduling group and that group's nice. */
function autogroup(pid: number | 'self'): { group: string; nice: number } | undefined {
  try {
    const m = /^(\S+) nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
    return m ? { group: m[1]!, nice: Number(m[2]) } : undefined;
  } catch {
    return undefined;
  }
}

// Playwright starts the browser in a session of its own, which Linux schedules as a group of its
// own: nice values rank threads only within a group, so the browser's group is lowered too.
t.test("the browser's scheduling group (its session's autogroup) is at the configured nice", async (t) => {
  const ours = autogroup('self');
  if (!ours) return t.skip('this kernel has no autogroups: per-process nice values are what count');
  // Above the default, so the value is seen to be applied; a lower group renders slowly on a loaded machine.
  const inst = await instance(t, { group_nice: 7, timeout_seconds: 120 });
  await render(inst, { html: '<h1>Own group</h1>', fetchResource: directFetcher() });
  const [browser] = chromiumChildren();
  t.ok(browser, 'the browser is a child of this process');
  const group = autogroup(browser!);
  t.ok(group, 'the browser has an autogroup');
  t.not(group!.group, ours.group, 'Playwright started the browser in a session of its own');
  t.equal(group!.nice, 7, "that session's group at group_nice");
  for (const pid of descendants(browser!)) {
    const g = autogroup(pid);
    if (g) t.equal(g.group, group!.group, `process ${pid} in the browser's group`);
  }
  t.same(autogroup('self'), ours, "the gateway's group as it was");
});
