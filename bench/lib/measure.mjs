// What the pdf and stall benches read and print alike: figures formatted, the target lines
// bench/run.mjs reads, the load average, and a process tree's CPU and memory from /proc (the
// gateway with its Chromium and engine processes; exited children count through their
// parent's cutime/cstime).
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

export const fmt = (n, d = 0) => n.toFixed(d);
export const mib = (b) => `${fmt(b / 1048576, 1)} MiB`;
export const load = () =>
  loadavg()
    .map((l) => fmt(l, 2))
    .join(' ');

/** The value at percentile `p` (0.99) of the numbers `xs`. */
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * p) - 1))];
}

/** `target NAME: FIGURE vs ANCHOR → RATIO (goal G) ok|short`, the line bench/run.mjs reads. */
export function line(name, figure, anchor, ratio, goal, ok) {
  process.stdout.write(
    `target ${name}: ${figure} vs ${anchor} → ${fmt(ratio, 2)}× (goal ${goal}) ${ok ? 'ok' : 'short'}\n`
  );
}

function stat(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ');
}

/** The processes below `pid` (one scan of /proc), leaving out `skip`'s subtrees. */
export function descendants(pid, skip = new Set()) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(stat(entry)[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {} // exited between the listing and the read
  }
  const out = [];
  const walk = (p) => {
    for (const c of children.get(p) ?? []) {
      if (skip.has(c)) continue;
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** CPU seconds (user + system) of `pid` and its descendants, the exited ones included; `skip` as descendants. */
export function treeCpu(pid, skip) {
  let ticks = 0;
  for (const p of [pid, ...descendants(pid, skip)]) {
    try {
      const f = stat(p);
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {}
  }
  return ticks / 100;
}

/** CPU seconds (user + system) this process has used. */
export function selfCpu() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

function status(pid, key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function pss(pid) {
  const m = /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

const sum = (f, pids) =>
  pids.reduce((a, p) => {
    try {
      return a + f(p);
    } catch {
      return a; // exited between the listing and the read
    }
  }, 0);

/**
 * A gateway's memory: its own RSS (`node`), its children's summed RSS (`children`: Chromium,
 * engine processes), the whole tree's PSS (shared pages counted once) and how many children.
 */
export function treeMemory(pid) {
  const kids = descendants(pid);
  const node = status(pid, 'VmRSS');
  const children = sum((p) => status(p, 'VmRSS'), kids);
  return { node, children, total: node + children, pss: sum(pss, [pid, ...kids]), processes: kids.length };
}
