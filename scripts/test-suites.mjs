#!/usr/bin/env node
// `npm test`: the whole suite, then the storage files again on the S3 adapter
// (test:storage-s3). Both run whatever the first one's result: chained with `&&`, a failure in
// the suite skipped the S3 pass without a word. The end names each pass and its result; the
// exit code is 1 when either failed.
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const PASSES = [
  { name: 'the suite (SQLite, local storage)', script: 'test:suite' },
  { name: 'the S3 storage pass (test:storage-s3)', script: 'test:storage-s3' },
];

/** Runs `npm run -s SCRIPT` for each pass, one after another; resolves to each one's result. */
export async function runPasses(passes, run = npmRun) {
  const results = [];
  for (const p of passes) {
    const started = Date.now();
    const code = await run(p.script);
    results.push({ name: p.name, ok: code === 0, code, seconds: Math.round((Date.now() - started) / 1000) });
  }
  return results;
}

export function summary(results) {
  const lines = results.map((r) => `  ${r.ok ? 'passed' : `FAILED (exit ${r.code})`}  ${r.name}, ${r.seconds} s`);
  const failed = results.filter((r) => !r.ok);
  lines.push(failed.length ? `npm test: ${failed.map((r) => r.name).join(' and ')} failed` : 'npm test: all passed');
  return lines.join('\n');
}

function npmRun(script) {
  return new Promise((resolveRun) => {
    const child = spawn('npm', ['run', '-s', script], { stdio: 'inherit' });
    child.on('error', () => resolveRun(127));
    child.on('close', (code, signal) => resolveRun(code ?? (signal ? 128 : 1)));
  });
}

// Run as a script, also through a link (the compiled tests' tree links scripts/): import.meta.url is the real path.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const results = await runPasses(PASSES);
  process.stdout.write(`\n${summary(results)}\n`);
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
}
