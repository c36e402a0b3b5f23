import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, cliEnv, runCli } from './fixtures/cli.js';

const FIXTURE = join(ROOT, 'test', 'bin', 'fixtures', 'health-vendor.mjs');

t.test('doctor fails a vendor whose health check fails or hangs, and a database it cannot reach', async (t) => {
  const { env, home } = await cliEnv(t);
  const file = join(home, 'svc.yaml');
  writeFileSync(
    file,
    `${[
      'vendors:',
      `  - { id: good, use: ${JSON.stringify(FIXTURE)}, config: { mode: ok } }`,
      `  - { id: broken, use: ${JSON.stringify(FIXTURE)}, config: { mode: fail } }`,
      `  - { id: stuck, use: ${JSON.stringify(FIXTURE)}, config: { mode: hang } }`,
    ].join('\n')}\n`
  );
  const r = await runCli(['doctor', '--config', file, '--timeout', '3000'], { env });
  t.equal(r.code, 1, r.stderr);
  t.match(r.stdout, /\nvendor good +ok +health-fixture/);
  t.match(r.stdout, /\nvendor broken +FAIL +health-fixture; no capabilities; upstream answered 401: invalid api key/);
  // Doctor gave up on the check that never answers (it exited, and says so), whatever the load.
  t.match(r.stdout, /\nvendor stuck +FAIL +.*did not answer within 3000 ms/);
  // The embedded engines' checks load native libraries (sharp, onnxruntime), which on a machine
  // at load 16 can pass any timeout short enough for a test: the count names what failed, and
  // only those timeouts may add to the fixture's two.
  const failed = r.stdout.split('\n').filter((l) => /^\S.* FAIL /.test(l));
  const others = failed.filter((l) => !/^vendor (broken|stuck) /.test(l));
  t.same(
    others.filter((l) => !/^vendor \S+ +FAIL +.*the health check did not answer within 3000 ms/.test(l)),
    [],
    'nothing else failed but a slow embedded check'
  );
  t.match(r.stdout, new RegExp(`\\n${failed.length} checks failed\\.`));

  // A closed port: the database check fails, the rest still runs.
  const down = await runCli(['doctor', '--timeout', '2000'], {
    env: { ...env, SVC_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
  });
  t.equal(down.code, 1);
  t.match(down.stdout, /\ndatabase +FAIL +postgres:\/\/\*\*\*@127\.0\.0\.1:1\/none: /);
  t.match(down.stdout, /\nvendor sandbox-payments +ok/);
});
