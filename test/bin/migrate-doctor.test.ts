import t from 'tap';
import { cliEnv, runCli } from './fixtures/cli.js';

// `doctor` and `migrate` as processes. Each CLI start loads the gateway (and doctor the embedded
// engines' native libraries): seconds of CPU each on a loaded 2-core machine, so these tests are
// four files that run side by side (migrate, doctor-config, doctor-health), three starts at most.

t.test('doctor before and after migrate', async (t) => {
  const { env, databaseUrl } = await cliEnv(t);
  const before = await runCli(['doctor'], { env });
  t.equal(before.code, 0, before.stderr);
  t.match(before.stdout, /^CHECK +STATUS +DETAIL\n/);
  t.match(before.stdout, /\nconfig +ok +no file: embedded defaults\n/);
  t.match(before.stdout, /\nmigrations +warn +.*core\/0001_init.*account\/0001_topups/);
  t.match(before.stdout, /\nvendor sandbox-payments +ok +sandbox-payments; payments\.checkout/);

  t.equal((await runCli(['migrate'], { env })).code, 0);
  const after = await runCli(['doctor'], { env });
  t.equal(after.code, 0, after.stderr);
  t.match(after.stdout, /\ndatabase +ok +(sqlite|postgres) /);
  t.match(after.stdout, /\nmigrations +ok +up to date \(core, jobs, results, retention, outbox, account, /);
  t.match(after.stdout, /\nvendor byok-openai +skip +.*BYOK only/);
  t.notOk(after.stdout.includes('postgres://postgres@'), 'database credentials are masked');
  t.ok(databaseUrl);
});
