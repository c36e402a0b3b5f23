import { readFileSync, readdirSync } from 'node:fs';

// CPU priorities as Linux reports them in /proc: the nice value is field 19 of a process's or
// thread's `stat`, counted from 1, after the command name in parentheses (which may hold spaces).

/** The nice value of process `pid`, or of its thread `tid`; undefined once it has ended. */
export function niceOf(pid: number | 'self', tid?: number): number | undefined {
  const file = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  let stat: string;
  try {
    stat = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  // After ") ", the fields from 3 (state) on: nice, field 19, is the 17th of them.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** The nice value of each thread of this process, by thread id. */
export function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task').map(Number)) {
    const nice = niceOf('self', tid);
    if (nice !== undefined) nices.set(tid, nice);
  }
  return nices;
}

/** The processes descended from `pid` (children, their children...), found through /proc. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const found: number[] = [];
  const within = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parents) {
      if (within.has(parent) && !within.has(child)) {
        within.add(child);
        found.push(child);
        grew = true;
      }
    }
  }
  return found;
}

/** The nice value of each thread of process `pid`, by thread id (empty once it has ended). */
export function processThreadNices(pid: number): number[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.map((tid) => niceOf(pid, Number(tid))).filter((n): n is number => n !== undefined);
}
