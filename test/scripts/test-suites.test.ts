import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// database-independent: runs package.json's test script with stand-ins for npm and tap; no app.

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** package.json's `test` script under sh, with `npm` and `tap` replaced by stand-ins that log and fail as told. */
async function npmTest(t: Tap, failing: string[]) {
  const bin = mkdtempSync(join(tmpdir(), 'svc-npm-test-'));
  t.teardown(() => rmSync(bin, { recursive: true, force: true }));
  const log = join(bin, 'log');
  writeFileSync(log, '');
  const fail = (name: string) => (failing.includes(name) ? 1 : 0);
  // `node scripts/test-build.mjs` would rebuild .test-build/ under the running suite: skipped.
  const stub = {
    node: `#!/bin/sh\n[ "$1" = scripts/test-build.mjs ] && exit 0\nexec ${process.execPath} "$@"\n`,
    tap: `#!/bin/sh\necho tap >> ${log}\nexit ${fail('tap')}\n`,
    npm: `#!/bin/sh\necho "$3" >> ${log}\ncase "$3" in\n${failing.map((f) => `  ${f}) exit 1;;\n`).join('')}esac\nexit 0\n`,
  };
  for (const [name, text] of Object.entries(stub)) writeFileSync(join(bin, name), text, { mode: 0o755 });
  const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.test;
  const child = spawn('sh', ['-c', script], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const ran = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { code, out, ran };
}

type Tap = { teardown(fn: () => unknown): void };

t.test('npm test: a failing suite still runs the S3 pass, and the end names what failed', async (t) => {
  const r = await npmTest(t, ['test:suite', 'tap']);
  t.ok(r.ran.includes('test:storage-s3'), `the S3 pass ran (ran: ${r.ran.join(', ')})`);
  t.equal(r.code, 1);
  t.match(r.out, /FAILED \(exit 1\) +the suite/);
  t.match(r.out, /passed +the S3 storage pass/);
  t.match(r.out, /npm test: the suite \(SQLite, local storage\) failed/);
});

t.test('npm test: a failing S3 pass fails the run; both passing exits 0', async (t) => {
  const s3 = await npmTest(t, ['test:storage-s3']);
  t.equal(s3.code, 1);
  t.match(s3.out, /npm test: the S3 storage pass \(test:storage-s3\) failed/);
  const ok = await npmTest(t, []);
  t.equal(ok.code, 0);
  t.same(ok.ran, ['test:suite', 'test:storage-s3']);
  t.match(ok.out, /npm test: all passed/);
});
