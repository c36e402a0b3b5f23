import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, cliEnv, runCli } from './fixtures/cli.js';

const FIXTURE = join(ROOT, 'test', 'bin', 'fixtures', 'health-vendor.mjs');

t.test('doctor before and after migrate', async (t) => {
  const { env, databaseUrl } = await cliEnv(t);
  const before = await runCli(['doctor'], { env });
  t.equal(before.code, 0, before.stderr);
  t.match(before.stdout, /^CHECK +STATUS +DETAIL\n/);
  t.match(before.stdout, /\nconfig +ok +no file: embedded defaults\n/);
  t.match(before.stdout, /\nmigrations +warn +.*core\/0001_init.*account\/0001_topups/);
  t.match(before.stdout, /\nvendor sandbox-payments +ok +sandbox-payments; payments\.checkout/);

  const first = await runCli(['migrate'], { env });
  t.equal(first.code, 0, first.stderr);
  // Every migration the gateway has, each once, then the count (areas add migrations over time).
  const applied = first.stdout.split('\n').filter((l) => l.startsWith('applied '));
  t.equal(applied[0], 'applied core/0001_init', 'the core first');
  t.ok(applied.includes('applied account/0001_topups'), 'then the areas');
  t.equal(new Set(applied).size, applied.length);
  t.match(first.stdout, new RegExp(`\\n${applied.length} migrations applied`));
  const second = await runCli(['migrate'], { env });
  t.equal(second.code, 0, second.stderr);
  t.match(second.stdout, /up to date: nothing to apply/);

  const after = await runCli(['doctor'], { env });
  t.equal(after.code, 0, after.stderr);
  t.match(after.stdout, /\ndatabase +ok +(sqlite|postgres) /);
  t.match(after.stdout, /\nmigrations +ok +up to date \(core, jobs, results, retention, account, /);
  t.match(after.stdout, /\nvendor byok-openai +skip +.*BYOK only/);
  t.notOk(after.stdout.includes('postgres://postgres@'), 'database credentials are masked');
  t.ok(databaseUrl);
});

t.test('doctor prints every config error with its key path and exits 2', async (t) => {
  const { env, home } = await cliEnv(t);
  const file = join(home, 'bad.yaml');
  writeFileSync(file, 'server:\n  port: "eighty"\nwallet:\n  markup: -1\nsurprise: true\n');
  const r = await runCli(['doctor', '--config', file], { env });
  t.equal(r.code, 2);
  t.match(r.stdout, /config +FAIL/);
  t.match(r.stderr, /server\.port: /);
  t.match(r.stderr, /wallet\.markup: /);
  t.match(r.stderr, /surprise/);

  const vendorCfg = join(home, 'vendor.yaml');
  writeFileSync(vendorCfg, `vendors:\n  - { id: v1, use: ${JSON.stringify(FIXTURE)}, config: { mode: sideways } }\n`);
  const v = await runCli(['doctor', '--config', vendorCfg], { env });
  t.equal(v.code, 2);
  t.match(v.stderr, /vendors\[0\]\.config\.mode/);
});

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
  const started = Date.now();
  // 3 s a check: the embedded engines' checks load their native libraries (sharp, onnxruntime),
  // which on a loaded 2-core machine took over 500 ms and failed two more checks than these.
  const r = await runCli(['doctor', '--config', file, '--timeout', '3000'], { env });
  t.equal(r.code, 1, r.stderr);
  t.match(r.stdout, /\nvendor good +ok +health-fixture/);
  t.match(r.stdout, /\nvendor broken +FAIL +health-fixture; no capabilities; upstream answered 401: invalid api key/);
  t.match(r.stdout, /\nvendor stuck +FAIL +.*did not answer within 3000 ms/);
  t.match(r.stdout, /\n2 checks failed\./);
  t.ok(Date.now() - started < 30_000, 'the hanging check did not hold doctor up');

  // A closed port: the database check fails, the rest still runs.
  const down = await runCli(['doctor', '--timeout', '2000'], {
    env: { ...env, SVC_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
  });
  t.equal(down.code, 1);
  t.match(down.stdout, /\ndatabase +FAIL +postgres:\/\/\*\*\*@127\.0\.0\.1:1\/none: /);
  t.match(down.stdout, /\nvendor sandbox-payments +ok/);
});
