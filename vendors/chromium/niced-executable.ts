import { createHash } from 'node:crypto';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { BACKGROUND_NICE } from '../../core/kit/vendor.js';

/**
 * A launcher for `executable` that starts it at BACKGROUND_NICE: a two-line shell script in
 * `dir`, the path Playwright is given in its place. Chromium is started from the event loop's
 * thread, at nice 0, and every process it forks (zygote, renderers, utility) inherits that: a
 * page's layout and printing took an equal share of the cores from every cheap request
 * (bench/stall's chromium-render target, 7.8x the idle p99). Lowering the processes after the
 * launch would miss the threads and forks made meanwhile; started at nice 10, all of them are.
 * A file, because Playwright runs its executable with its own flags first, so `nice` itself
 * cannot be the executable. `exec` keeps the browser's pid, the one Playwright kills.
 *
 * Chromium sets its threads' nice values itself (display and IO threads -8, its thread pools
 * 0): a user without CAP_SYS_NICE cannot lower a nice value, so those stay at 10, but as root
 * (containers) they succeed and undo the launcher's. Where it may (root), the launcher drops
 * CAP_SYS_NICE from the browser's capability bounding set with util-linux's `setpriv`; where
 * it may not, plain `nice` is all that is needed.
 *
 * Nice values only rank threads within one autogroup, and Linux (sched_autogroup_enabled, the
 * default on desktop and cloud kernels) makes each session one: Playwright starts the browser
 * detached, in a session of its own, so its nice 10 counted for nothing against the gateway's
 * event loop, and the browser's group took as many of the cores as the gateway's (the stall
 * bench's chromium-render, 4.5x the idle p99). So the launcher, when it leads a session of its
 * own, also sets that session's autogroup to `groupNice` (raising it needs no privilege; 0 leaves
 * it). A group weighs against every other session's, not only the gateway's: at 10 a render on a
 * host shared with other busy sessions got a tenth of its share, and a launch ran past its bound,
 * hence a milder default (the vendor's `group_nice`). Without autogroups (a kernel without them,
 * a process in a cgroup of its own: containers, systemd units) the file is absent or unused, and
 * the per-process nice is what counts.
 */
export async function nicedExecutable(executable: string, dir: string, groupNice: number): Promise<string> {
  // `nice -n` adds to the launcher's own nice, which is the gateway's: the step up to BACKGROUND_NICE.
  const step = Math.max(0, BACKGROUND_NICE - getPriority());
  const run = `nice -n ${step} ${quoted(executable)} "$@"`;
  const script = [
    '#!/bin/sh',
    // Fields after the command name: state, ppid, pgrp, session; only a session leader's group is the browser's alone.
    ...(groupNice > 0
      ? [
          `group() { set -- \${1##*) }; [ "$4" = "$$" ] && { echo ${groupNice} >/proc/self/autogroup; } 2>/dev/null; }`,
          'if [ -w /proc/self/autogroup ] && read -r stat </proc/self/stat; then group "$stat"; fi',
        ]
      : []),
    `if setpriv ${NO_SYS_NICE} true 2>/dev/null; then exec setpriv ${NO_SYS_NICE} ${run}; fi`,
    `exec ${run}`,
    '',
  ].join('\n');
  // Named by its content: gateways sharing a data directory with other binaries get launchers of their own.
  const name = `chromium-niced-${createHash('sha256').update(script).digest('hex').slice(0, 12)}`;
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, script, { mode: 0o755 });
  await chmod(partial, 0o755);
  await rename(partial, path);
  return path;
}

/** setpriv's flags that leave the browser without CAP_SYS_NICE. */
const NO_SYS_NICE = '--bounding-set=-sys_nice';

/** `s` as one word for sh: single-quoted, a quote inside closed, escaped and reopened. */
function quoted(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
