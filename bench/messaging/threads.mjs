// CPU by thread of one process, from /proc/PID/task: where a gateway's CPU an email goes. Node
// names every thread `node`, so the main thread (the event loop) is told apart by its id, and
// the others by how busy they were: the two busiest are the MIME worker threads in this bench,
// the rest V8's (GC, compiler) and libuv's.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) of each thread of `pid`, by thread id. */
export function threadCpu(pid) {
  const out = new Map();
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(Number(t), (Number(f[11]) + Number(f[12])) / 100);
    } catch {} // ended between the listing and the read
  }
  return out;
}

/** `loop 1.20, threads 0.62 + 0.60 + 0.31 others` in ms an email between two readings of `pid`. */
export function perEmail(pid, before, after, n) {
  const ms = (s) => ((s * 1000) / n).toFixed(2);
  const used = [...after].map(([tid, s]) => [tid, s - (before.get(tid) ?? 0)]);
  const loop = used.find(([tid]) => tid === pid)?.[1] ?? 0;
  const rest = used
    .filter(([tid]) => tid !== pid)
    .map(([, s]) => s)
    .sort((a, b) => b - a);
  const others = rest.slice(2).reduce((a, b) => a + b, 0);
  return `loop ${ms(loop)}, threads ${rest.slice(0, 2).map(ms).join(' + ')} + ${ms(others)} others`;
}
