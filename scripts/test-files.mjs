#!/usr/bin/env node
// The test files whose run can differ under a suite variable, for the suites that re-run them
// (package.json): `database` for test:pg, `storage` for test:storage-s3. A file outside the
// list runs exactly the same code either way, so a second run would only cost time (two CI
// runs of ~140 files on 2 cores). Decided from the sources, not a hand list, and on the safe
// side: any doubt keeps a file in. Prints one path a line (the compiled one with --built).
//   database: the file's imports (followed through the repository's own modules) reach
//             test/helpers/app.ts, the only reader of SVC_TEST_DATABASE_URL, and the file has
//             no `// database-independent: <why>` line: a file that reaches it only for a data
//             dir, or whose work (a browser, a model, the CLI's help) opens no database or only
//             what other files test on both, says so and why, and runs once.
//   storage:  they reach test/plugins/storage/helpers.ts (the only reader of SVC_TEST_STORAGE
//             besides the tests that name it), and some file on the way names STORAGE_VENDOR or
//             SVC_TEST_STORAGE, or calls listeningApp() without naming `vendors` in the call
//             (named vendors keep an app on them whatever the variable says; s3BackedApp() is
//             always s3), or with options held in a variable, which it cannot read.
//   all:      every test file (npm test's suite).
// Long poles first: tap runs files in alphabetical order whatever order they are named in, so
// the longest files (Chromium's, the ONNX model's, under test/vendors/) started last and ran
// nearly alone at the end of the suite. A file with a `// long-pole: <why>` line is named, with
// --built, through a link under .test-build/first/, which sorts before .test-build/test/: it
// starts first and the short files fill the other slots (Node runs the link's target, so
// relative imports and import.meta.url are the real file's).
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DB_HELPER = 'test/helpers/app.ts';
const STORAGE_HELPER = 'test/plugins/storage/helpers.ts';
const INDEPENDENT = /^\/\/ database-independent: \S/m;
const LONG_POLE = /^\/\/ long-pole: \S/m;

function* testFiles(dir) {
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) yield* testFiles(p);
    else if (e.name.endsWith('.test.ts')) yield p;
  }
}

const sources = new Map();
function source(file) {
  if (!sources.has(file)) {
    try {
      sources.set(file, readFileSync(join(ROOT, file), 'utf8'));
    } catch {
      sources.set(file, ''); // a package or a generated file: not ours to follow
    }
  }
  return sources.get(file);
}

/** The file and every repository module it imports, statically or with import('…'). */
function closure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const m of source(file).matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)) {
    const target = relative(ROOT, resolve(ROOT, dirname(file), m[1])).replace(/\.js$/, '.ts');
    if (target.endsWith('.ts')) closure(target, seen);
  }
  return seen;
}

/** Each `listeningApp(…)` call's argument text, parentheses balanced. */
function* listeningAppArgs(text) {
  for (const m of text.matchAll(/\blisteningApp\(/g)) {
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')') depth--;
    }
    yield text.slice(start, i - 1);
  }
}

function storageDependent(text) {
  if (/\bSTORAGE_VENDOR\b|SVC_TEST_STORAGE/.test(text)) return true;
  // `listeningApp(t)`, or options without vendors, or options held in a name: on the suite's vendor.
  for (const args of listeningAppArgs(text)) {
    if (!/^\s*[\w.]+\s*(,\s*\{[\s\S]*\}\s*)?,?\s*$/.test(args) || !/\bvendors\s*:/.test(args)) return true;
  }
  return false;
}

const mode = process.argv[2];
// `--built`: the files' compiled twins in .test-build/ (scripts/test-build.mjs), which npm test runs.
const built = process.argv.includes('--built');
if (mode !== 'database' && mode !== 'storage' && mode !== 'all') {
  console.error('usage: node scripts/test-files.mjs database|storage|all [--built]');
  process.exit(2);
}

/** The compiled file's path to name to tap: a long pole's through its link under .test-build/first/. */
function builtPath(file) {
  const js = file.replace(/\.ts$/, '.js');
  if (!LONG_POLE.test(source(file))) return `.test-build/${js}`;
  const at = join(ROOT, '.test-build/first', js);
  try {
    lstatSync(at);
  } catch {
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(join(ROOT, '.test-build', js), at);
  }
  return `.test-build/first/${js}`;
}

function kept(file) {
  if (mode === 'all') return true;
  const files = closure(file);
  return mode === 'database'
    ? files.has(DB_HELPER) && !INDEPENDENT.test(source(file))
    : files.has(STORAGE_HELPER) && [...files].some((f) => f !== STORAGE_HELPER && storageDependent(source(f)));
}

for (const file of [...testFiles('test')].sort()) {
  if (kept(file)) console.log(built ? builtPath(file) : file);
}
