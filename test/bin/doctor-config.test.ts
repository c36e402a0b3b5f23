import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, cliEnv, runCli } from './fixtures/cli.js';

// database-independent: doctor's config errors, printed before a database is opened.

const FIXTURE = join(ROOT, 'test', 'bin', 'fixtures', 'health-vendor.mjs');

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
