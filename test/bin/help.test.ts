import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, cliEnv, runCli } from './fixtures/cli.js';

// database-independent: help and usage errors; the CLI opens no database for them.

const COMMANDS = ['serve', 'activate', 'migrate', 'openapi', 'doctor', 'tunnel'];

t.test('top-level help lists every command', async (t) => {
  const { env } = await cliEnv(t);
  const variants = [['--help'], ['help']];
  const results = await Promise.all(variants.map((args) => runCli(args, { env })));
  for (const [i, args] of variants.entries()) {
    const r = results[i];
    t.equal(r.code, 0, args.join(' '));
    t.match(r.stdout, /^svc-gateway: /);
    for (const c of COMMANDS) t.match(r.stdout, new RegExp(`\\n  ${c} `), `${args.join(' ')} names ${c}`);
    t.equal(r.stderr, '');
  }
});

t.test('--help and package.json name the built-in areas, and no count of areas that do not exist', async (t) => {
  const [{ env }, { builtinAreas }] = await Promise.all([cliEnv(t), import('../../plugins/builtin.js')]);
  const { stdout } = await runCli(['--help'], { env });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { description: string };
  for (const a of builtinAreas) {
    t.match(stdout, new RegExp(`\\b${a.name}\\b`), `--help names ${a.name}`);
    t.match(pkg.description.toLowerCase(), new RegExp(`\\b${a.name}\\b`, 'i'), `package.json names ${a.name}`);
  }
  t.notMatch(`${stdout}${pkg.description}`, /sixteen|\b16\b/, 'no area count beyond what is built');
  t.match(stdout, /--port N .*SVC_PORT/, 'the port flag and its variable');
});

t.test('each command has its own help', async (t) => {
  const { env } = await cliEnv(t);
  const results = await Promise.all(COMMANDS.map((c) => runCli([c, '--help'], { env })));
  for (const [i, c] of COMMANDS.entries()) {
    t.equal(results[i].code, 0, c);
    t.match(results[i].stdout, new RegExp(`^Usage: svc-gateway ${c}`), `${c} --help`);
  }
  t.same((await runCli(['help', 'doctor'], { env })).stdout, results[4].stdout, '"help doctor" is "doctor --help"');
});

t.test('usage errors exit 2 and say what was wrong', async (t) => {
  const { env } = await cliEnv(t);
  const [unknown, flag, positional, timeout] = await Promise.all(
    [['frobnicate'], ['migrate', '--nope'], ['doctor', 'extra'], ['doctor', '--timeout', 'soon']].map((args) =>
      runCli(args, { env })
    )
  );
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command "frobnicate"/);
  t.equal(flag.code, 2);
  t.match(flag.stderr, /svc-gateway migrate: .*--nope/);
  t.match(flag.stderr, /Usage: svc-gateway migrate/, 'followed by the command help');
  t.equal(positional.code, 2);
  t.equal(timeout.code, 2);
  t.match(timeout.stderr, /--timeout must be a positive number/);
});

t.test('a config error exits 2 with the file or key it is about', async (t) => {
  const { env, home } = await cliEnv(t);
  const [missing, badPort] = await Promise.all([
    runCli(['migrate', '--config', `${home}/nope.yaml`], { env }),
    runCli(['serve'], { env: { ...env, SVC_PORT: 'eighty' } }),
  ]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read config file .*nope\.yaml/);
  t.equal(badPort.code, 2);
  t.match(badPort.stderr, /server\.port/);
});
