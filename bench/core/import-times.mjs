// Run by the core bench in a fresh process: `import()` each module named on the command line,
// one after another, and print one JSON line of [specifier, wall ms, CPU ms] per module. Each
// figure is what that import added to what the ones before it had loaded already, so a
// package shared by two areas counts for the first.
import { pathToFileURL } from 'node:url';

const rows = [];
for (const spec of process.argv.slice(2)) {
  const target = spec.startsWith('/') ? pathToFileURL(spec).href : spec;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await import(target);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  rows.push([spec, wall, (cpu.user + cpu.system) / 1000]);
}
process.stdout.write(`${JSON.stringify(rows)}\n`);
// Some modules start timers or pools when imported; the figures are taken.
process.exit(0);
