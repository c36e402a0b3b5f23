import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { cliCommand } from '../../helpers/cli-command.js';
import { gatewayWithAccount } from '../../helpers/gateway-process.js';

// The real CLI: `svc-gateway tunnel PORT` against a gateway process exposes a local server,
// and killed and started again it serves the same URL.

function startTunnel(t: Tap, port: number, gateway: string, key: string, home: string) {
  const proc = spawn(process.execPath, [...cliCommand(), 'tunnel', String(port), '--url', gateway], {
    env: { ...process.env, SVC_API_KEY: key, XDG_CONFIG_HOME: home, SVC_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (out += c));
  const exited = once(proc, 'exit');
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  });
  const url = new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /Forwarding (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    };
    proc.stdout.on('data', check);
    proc.once('exit', (code) => reject(new Error(`tunnel exited ${code}:\n${out}`)));
  });
  return { proc, url, exited };
}

type Tap = typeof t;

function get(publicUrl: string, path: string): Promise<string> {
  const u = new URL(publicUrl);
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: u.port, path, headers: { host: u.host }, agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

t.test('svc-gateway tunnel exposes a local port; restarted it keeps its URL', async (t) => {
  const { gw, headers } = await gatewayWithAccount(t, 'svc-tunnel-cli-');
  const key = headers.authorization.slice('Bearer '.length);
  const home = await mkdtemp(join(tmpdir(), 'svc-tunnel-home-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const app = http.createServer((req, res) => res.end(`local saw ${req.url}`));
  app.listen(0, '127.0.0.1');
  await once(app, 'listening');
  t.teardown(() => new Promise((r) => app.close(r)));
  const port = (app.address() as { port: number }).port;

  const first = startTunnel(t, port, gw.url, key, home);
  const url = await first.url;
  t.match(url, /^http:\/\/[a-z0-9]{10}\.localhost:\d+$/);
  t.equal(await get(url, '/hello'), 'local saw /hello');

  first.proc.kill('SIGKILL');
  await first.exited;
  const second = startTunnel(t, port, gw.url, key, home);
  t.equal(await second.url, url, 'the same URL after a restart');
  t.equal(await get(url, '/again'), 'local saw /again');
  second.proc.kill('SIGINT');
  t.same(await second.exited, [0, null], 'SIGINT ends it cleanly');
});
