import t from 'tap';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { cliEnv, runCli } from './fixtures/cli.js';

// database-independent: doctor's summary of what is unavailable; its database rows are tested in doctor-health.

t.test(
  'doctor with the embedded defaults: every unavailable capability and how to enable it, not "fine"',
  async (t) => {
    const { env } = await cliEnv(t);
    const r = await runCli(['doctor'], { env });
    // The embedded engines' checks load native libraries, which at load 16+ can pass the default
    // 5-s timeout: such a FAIL may come, nothing else.
    const failed = r.stdout.split('\n').filter((l) => /^\S.* FAIL /.test(l));
    t.same(
      failed.filter((l) => !/the health check did not answer within 5000 ms/.test(l)),
      [],
      r.stderr
    );
    t.equal(r.code, failed.length ? 1 : 0);
    t.match(
      r.stdout,
      /\nunavailable +warn +ai\.asr, ai\.chat, ai\.embed, .*: no vendor configured\. Add one under `vendors:` .*register your own key with POST \/v1\/byok\./
    );
    t.notMatch(r.stdout, /Everything checked is fine/);
    t.match(
      r.stdout,
      /\n(No check failed, but|\d+ checks? failed\.) \d+ capabilities are unavailable \(the "unavailable" rows say how to enable them\)/
    );
  }
);

t.test('a vendor that cannot be reached: its name once in the row', async (t) => {
  const { env, home } = await cliEnv(t);
  // A port that was just free: nothing listens there.
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  const file = join(home, 'svc.yaml');
  const url = `http://127.0.0.1:${port}/v1`;
  writeFileSync(file, `vendors:\n  - { id: ollama, use: openai-compatible, config: { base_url: "${url}" } }\n`);
  const r = await runCli(['doctor', '--config', file], { env });
  t.equal(r.code, 1, r.stderr);
  t.match(r.stdout, /\nvendor ollama +FAIL +openai-compatible; [^\n]*; cannot connect \(ECONNREFUSED\)/);
  t.notMatch(r.stdout, /ollama: cannot connect/);
  t.notMatch(r.stdout, /\nunavailable +warn +[^\n]*ai\.chat,/, 'ai.chat has a vendor configured');
});
