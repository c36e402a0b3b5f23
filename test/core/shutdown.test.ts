import t from 'tap';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliEnv, startCli } from '../bin/fixtures/cli.js';

/** Connect, or say why not (ECONNREFUSED once the server stopped listening). */
function tryConnect(port: number): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

function readResponse(sock: Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    sock.on('data', (d) => {
      data += d;
      const head = data.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(data);
      if (head >= 0 && len && Buffer.byteLength(data.slice(head + 4)) >= Number(len[1])) resolve(data);
    });
    sock.on('close', () => resolve(data));
  });
}

t.test('SIGTERM: the call in flight gets its answer, new connections are refused, exit 0', async (t) => {
  const { env } = await cliEnv(t);
  const child = startCli(['serve', '--port', '0', '--host', '127.0.0.1'], { env });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before listening: ${stderr}`)));
  });

  // A request whose headers are in and whose body is still on its way.
  const sock = connect(port, '127.0.0.1');
  await once(sock, 'connect');
  const response = readResponse(sock);
  const parts = ['{"device_kind"', ':"te', 'st"}'];
  sock.write(
    `POST /v1/activate HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${parts.join('').length}\r\n\r\n${parts[0]}`
  );
  await sleep(300);

  child.kill('SIGTERM');
  let refused = '';
  for (let i = 0; i < 50 && refused !== 'ECONNREFUSED'; i++) {
    refused = await tryConnect(port);
    if (refused !== 'ECONNREFUSED') await sleep(100);
  }
  t.equal(refused, 'ECONNREFUSED', 'new connections are refused once shutdown began');

  // Trickle in the rest of the body.
  sock.write(parts[1]);
  await sleep(100);
  sock.write(parts[2]);
  const raw = await response;
  t.match(raw, /^HTTP\/1\.1 200 /, 'the call in flight is answered');
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  t.match(body, { account_id: /^acct_/, primary_api_key: /^sk_live_/ });
  t.match(body.checkout_url, `http://127.0.0.1:${port}/`, 'URLs handed out name the port served, not 0');
  sock.destroy();

  // Exit 0 is the proof it drained within the grace period: past server.shutdown_grace_ms the
  // gateway exits 1. A stopwatch here would also count how slowly a loaded machine starts it.
  const [code, signal] = await exited;
  t.equal(code, 0, `exit 0, within the grace period (stderr: ${stderr})`);
  t.equal(signal, null);
});
