import t from 'tap';
import { cliEnv, runCli } from './fixtures/cli.js';

t.test('migrate applies every migration once, the core first; a second run has nothing to apply', async (t) => {
  const { env } = await cliEnv(t);
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
});
