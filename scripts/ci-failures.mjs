#!/usr/bin/env node
// Prints the failures in saved TAP output (`.ci/run` keeps each suite's output in a file): every
// `not ok` line with the file it belongs to, and the YAML diagnostics of the innermost ones.
// Why: CI shows only the tail of a run, and a suite's tail is its last files, which passed; a
// failure 800 s earlier was invisible (one red run said only "SQLite FAILED").
//   node scripts/ci-failures.mjs LOG...
import { readFileSync } from 'node:fs';

const MAX_DIAG_LINES = 40;

/** The failures in one TAP text: [{ file, line, diag }] in order, innermost ones with their YAML. */
export function failures(text) {
  const lines = text.split('\n');
  const out = [];
  let file = '';
  for (let i = 0; i < lines.length; i++) {
    const top = /^# Subtest: (\S+\.js)$/.exec(lines[i]);
    if (top) file = top[1];
    if (!/^\s*not ok \d+/.test(lines[i])) continue;
    const indent = lines[i].search(/\S/);
    const diag = [];
    if (/^\s*---\s*$/.test(lines[i + 1] ?? '')) {
      for (let j = i + 1; j < lines.length && diag.length < MAX_DIAG_LINES; j++) {
        diag.push(lines[j]);
        if (lines[j].slice(0, indent + 6).trim() === '...') break;
      }
    }
    out.push({ file, line: lines[i], diag });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const log of process.argv.slice(2)) {
    let text;
    try {
      text = readFileSync(log, 'utf8');
    } catch {
      continue;
    }
    const found = failures(text);
    if (found.length === 0) continue;
    process.stdout.write(`== failures in ${log}\n`);
    for (const f of found) {
      process.stdout.write(`${f.file ? `[${f.file}] ` : ''}${f.line.trim()}\n`);
      for (const d of f.diag) process.stdout.write(`    ${d}\n`);
    }
  }
}
