import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { freshDatabaseUrl } from './helpers/app.js';
import { cliCommand } from './helpers/cli-command.js';

// database-independent: the quickstart is a laptop's: the CLI with no config, on SQLite.

// The README's Quickstart, run verbatim with bash against the real gateway process: only
// the SVC_URL line is changed, to the port this test picked. Then the laptop case of local
// development: a webhook to http://localhost:PORT, with no config file. scripts/newcomer.sh
// runs this file again in a fresh clone, after timing the README's run command there.

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

function quickstartScript(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Quickstart'));
  if (!section) throw new Error('README.md has no "## Quickstart" section');
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('the Quickstart section has no sh block');
  return block[1];
}

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startGateway(t: { teardown(fn: () => unknown): void }, port: number): Promise<ChildProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-readme-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbUrl = await freshDatabaseUrl(t, dir);
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATABASE_URL: dbUrl, SVC_LOG_LEVEL: 'warn' };
  for (const k of ['SVC_CONFIG', 'SVC_PORT', 'SVC_HOST', 'SVC_PUBLIC_URL', 'SVC_DATA_DIR', 'SVC_ADMIN_KEY'])
    delete env[k];
  const child = spawn(process.execPath, [...cliCommand(), '--port', String(port), '--data-dir', dir], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the gateway did not start in 60 s: ${out}${stderr}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with ${code}: ${out}${stderr}`));
    });
  });
  return child;
}

async function runBash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bash = spawn('bash', ['-s'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  bash.stdout.on('data', (d) => (stdout += d));
  bash.stderr.on('data', (d) => (stderr += d));
  bash.stdin.end(script);
  const [code] = await once(bash, 'exit');
  return { code, stdout, stderr };
}

const port = await freePort();
await startGateway(t, port);
const base = `http://127.0.0.1:${port}`;

t.test('the README quickstart works verbatim against the real gateway', async (t) => {
  const script = quickstartScript();
  const urlLine = /^SVC_URL=http:\/\/127\.0\.0\.1:8787$/m;
  t.match(script, urlLine, 'the base URL is one variable at the top');

  const { code, stdout, stderr } = await runBash(script.replace(urlLine, `SVC_URL=${base}`));
  t.equal(code, 0, stderr);
  t.equal(stderr, '', 'nothing on stderr');
  const lines = stdout.trim().split('\n');
  t.match(lines[0], /^key: sk_live_\w{4}\.\.\.$/);
  t.equal(lines[1], '{"balance_usd":5,"currency":"USD"}');
  t.match(JSON.parse(lines[2]), { items: [{ label: 'primary', scopes: ['*'] }], next_cursor: null });
  t.equal(lines[3], '{"ok":true}', 'the second key was revoked');
  t.match(lines[4], new RegExp(`^checkout: http://127\\.0\\.0\\.1:${port}/sandbox/checkout/cs_sandbox_\\w{24}$`));
  t.equal(lines[5], 'pay: HTTP 200');
  t.equal(lines[lines.length - 1], '{"balance_usd":25,"currency":"USD"}', 'the final balance is 5 + 20');
});

t.test('with no config, a webhook to http://localhost:PORT is delivered, signed', async (t) => {
  const got: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const receiver = createHttpServer((req, res) => {
    let body = '';
    req
      .on('data', (d) => (body += d))
      .on('end', () => {
        got.push({ headers: req.headers, body });
        res.end('ok');
      });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  t.teardown(() => new Promise((r) => receiver.close(r)));
  const hook = `http://localhost:${(receiver.address() as { port: number }).port}/hook`;

  const post = (path: string, body: unknown, key?: string) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    });
  const key = ((await (await post('/v1/activate', {})).json()) as { primary_api_key: string }).primary_api_key;
  const sent = await post(
    '/v1/scheduling/webhook/send',
    { url: hook, payload: { hello: 'local' }, event_type: 'dev.test' },
    key
  );
  t.equal(sent.status, 200, await sent.clone().text());
  const { delivery_id: id } = (await sent.json()) as { delivery_id: string };

  let state = '';
  for (let i = 0; i < 100 && state !== 'delivered' && state !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const d = await fetch(`${base}/v1/scheduling/webhook/deliveries/${id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    state = ((await d.json()) as { state: string }).state;
  }
  t.equal(state, 'delivered', 'loopback egress is allowed while the gateway listens on loopback');
  t.equal(got.length, 1, 'the receiver got it once');
  if (!got.length) return;
  const secret = await fetch(`${base}/v1/scheduling/webhook/secret`, { headers: { authorization: `Bearer ${key}` } });
  const wh = new Webhook(((await secret.json()) as { secret: string }).secret);
  t.same(
    wh.verify(got[0].body, got[0].headers as Record<string, string>),
    { hello: 'local' },
    'signed with the account secret'
  );
});
