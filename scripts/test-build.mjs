#!/usr/bin/env node
// The suites (npm test, test:pg, test:storage-s3, test:soak) run the test files compiled to
// JavaScript, in .test-build/: through tsx's loader a file that builds an app took ~1.3 s more
// CPU (7.6 against 6.3 s under tap's own module hook; the loader's start and its work on each
// of some 1,500 module loads), and a CI run starts ~400 files on 2 cores. esbuild (tsx's own
// transpiler: the same output) compiles the tree here in a second or two, file by file.
//
// .test-build/ mirrors the repository: every .ts file of the directories below compiled to a
// .js beside a link to the .ts itself (tests read some sources), every other file and every
// other top-level entry (docs, package.json, dist, node_modules...) a symbolic link: relative
// paths, `import.meta.url` and package resolution work as from the sources. Only changed
// files are compiled again; files gone from the sources go. What a test starts in another
// process or loads by path goes through test/helpers/runnable.ts.
// `npx tap test/x.test.ts` still runs a file from its sources through tsx (.taprc).
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const OUT = join(ROOT, '.test-build');
const COMPILED = ['core', 'config', 'plugins', 'vendors', 'bin', 'client', 'test'];
const SKIP = new Set(['.git', '.test-build', '.tap', ...COMPILED]);

const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));

/** A link at `at` to `to`, unless one is there already. */
function link(to, at) {
  try {
    lstatSync(at);
    return;
  } catch {}
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(to, at);
}

const wanted = new Set();
const stale = [];

function walk(dir) {
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = join(dir, e.name);
    if (e.isDirectory()) {
      walk(rel);
      continue;
    }
    wanted.add(rel);
    link(join(ROOT, rel), join(OUT, rel));
    if (!e.name.endsWith('.ts') || e.name.endsWith('.d.ts')) continue;
    const js = rel.replace(/\.ts$/, '.js');
    wanted.add(js);
    let fresh = false;
    try {
      fresh = statSync(join(OUT, js)).mtimeMs >= statSync(join(ROOT, rel)).mtimeMs;
    } catch {}
    if (!fresh) stale.push(join(ROOT, rel));
  }
}

/** Drop what the sources no longer have (a deleted test must not run on). */
function prune(dir) {
  for (const e of readdirSync(join(OUT, dir), { withFileTypes: true })) {
    const rel = join(dir, e.name);
    if (e.isDirectory()) prune(rel);
    else if (!wanted.has(rel)) rmSync(join(OUT, rel), { force: true });
  }
}

/**
 * tap builds its Test class with the plugins .taprc names, but only once a run has started: that
 * run's files still start with the default plugins' module hooks (ts-node's among them), ~35 s of
 * CPU a file instead of ~6. So the first suite after `npm ci` (all of CI's SQLite suite) was the
 * slow one. Rebuilt here, before any run, when the built class holds a plugin .taprc leaves out.
 */
function tapBuilt() {
  const excluded = [...readFileSync(join(ROOT, '.taprc'), 'utf8').matchAll(/^\s*-\s*'!([^']+)'/gm)].map((m) => m[1]);
  const built = readFileSync(join(ROOT, 'node_modules/@tapjs/test/test-built/dist/esm/index.js'), 'utf8');
  const signature = /export const signature = `([^`]*)`/.exec(built)?.[1].split('\n') ?? [];
  if (!excluded.some((p) => signature.includes(p))) return;
  process.stderr.write('test build: rebuilding tap without the plugins .taprc leaves out\n');
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/.bin/tap'), 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

tapBuilt();
mkdirSync(OUT, { recursive: true });
for (const e of readdirSync(ROOT)) if (!SKIP.has(e)) link(join(ROOT, e), join(OUT, e));
for (const d of COMPILED) {
  if (!existsSync(join(ROOT, d))) continue;
  walk(d);
  prune(d);
}
if (stale.length) {
  await build({
    entryPoints: stale,
    outbase: ROOT,
    outdir: OUT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'warning',
    tsconfigRaw: { compilerOptions },
  });
}
process.stderr.write(`test build: ${stale.length} file(s) compiled to ${relative(process.cwd(), OUT) || '.'}/\n`);
