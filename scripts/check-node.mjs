#!/usr/bin/env node
// Exit 1, saying why, when this Node is outside package.json's engines.node (".ci/run" calls
// it before `npm ci`). Reads the range from package.json, so there is one place to change it.
// Understands what that field uses: ">=A[.B[.C]]" optionally followed by " <N[.M[.P]]".
import { readFileSync } from 'node:fs';

const range = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines?.node ?? '';
const m = /^>=\s*(\d+(?:\.\d+){0,2})(?:\s+<\s*(\d+(?:\.\d+){0,2}))?$/.exec(range.trim());
if (!m) {
  process.stderr.write(`check-node: engines.node "${range}" is not of the form ">=A.B.C <N"\n`);
  process.exit(2);
}
const parts = (v) => [...v.split('.').map(Number), 0, 0].slice(0, 3);
const cmp = (a, b) => a.reduce((r, x, i) => r || Math.sign(x - b[i]), 0);
const have = parts(process.versions.node);
const ok = cmp(have, parts(m[1])) >= 0 && (!m[2] || cmp(have, parts(m[2])) < 0);
process.stdout.write(`node ${process.version} (engines.node "${range}"): ${ok ? 'supported' : 'NOT supported'}\n`);
if (!ok) process.exit(1);
