import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { ROOT, cliEnv } from './fixtures/cli.js';

// database-independent: the signal path of `npm start`; the database it opens is SQLite's default.

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

// Ctrl-C at a terminal signals npm, sh and node alike; a SIGINT to npm alone (a process manager,
// `kill -INT`) reaches node only through npm, which forwards it to the script's shell: the shell
// must be node itself (exec), as a sh waiting on a child holds SIGINT until the child exits.
t.test('SIGINT to `npm start` stops the gateway cleanly: exit 0, the port freed', async (t) => {
  const { env } = await cliEnv(t);
  const npm = spawn('npm', ['start', '--', '--port', '0'], {
    cwd: ROOT,
    env: { ...env, SVC_DATABASE_URL: '', SVC_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so the teardown can end whatever is left of it
  });
  t.teardown(() => {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      /* all gone */
    }
  });
  let out = '';
  npm.stderr!.on('data', (d) => (out += d));
  const port = await new Promise<number>((resolve, reject) => {
    npm.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    npm.once('close', () => reject(new Error(`npm start ended before listening:\n${out}`)));
  });
  t.equal(await refused(port), false, 'serving');
  const closed = once(npm, 'close');
  npm.kill('SIGINT');
  const [code, signal] = await closed;
  t.same({ code, signal }, { code: 0, signal: null }, out.slice(-2000));
  t.match(out, /"signal":"SIGINT","msg":"shutting down"/);
  t.ok(await refused(port), 'the port is free');
});
