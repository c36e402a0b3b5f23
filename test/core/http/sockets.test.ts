import { once } from 'node:events';
import { request } from 'node:http';
import t from 'tap';
import WebSocket, { WebSocketServer } from 'ws';
import { makeApp } from '../../helpers/app.js';
import { hostName } from '../../../core/http/sockets.js';

function get(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('claimed Hosts and upgrade paths are served beside Fastify on the same port', async (t) => {
  const { app } = await makeApp(t);
  const wss = new WebSocketServer({ noServer: true });
  let closedByOwner = false;
  app.svc.sockets.claimHosts({
    name: 'test',
    matches: (h) => h.endsWith('.tun.test'),
    request: (_req, res) => res.end('claimed'),
    upgrade: (_req, socket) => socket.destroy(),
  });
  app.svc.sockets.onUpgrade({
    prefix: '/x/ws',
    handle: (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (m) => ws.send(m))),
    close: () => {
      closedByOwner = true;
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;

  t.same(await get(port, 'a.tun.test:80', '/v1/version'), { status: 200, body: 'claimed' });
  const api = await get(port, `127.0.0.1:${port}`, '/v1/version');
  t.equal(api.status, 200);
  t.match(JSON.parse(api.body), { version: String });

  const ws = new WebSocket(`ws://127.0.0.1:${port}/x/ws?token=1`);
  await once(ws, 'open');
  ws.send('ping');
  const [echo] = await once(ws, 'message');
  t.equal(String(echo), 'ping');

  const stray = new WebSocket(`ws://127.0.0.1:${port}/elsewhere`);
  stray.on('error', () => undefined); // ws reports its own abort of the handshake below
  const [, res] = await once(stray, 'unexpected-response');
  t.equal(res.statusCode, 404);
  stray.terminate();

  const closed = once(ws, 'close');
  await app.close();
  await closed;
  t.ok(closedByOwner, 'the owner was asked to end its sockets');
  wss.close();
});

t.test('hostName drops the port and lower-cases', async (t) => {
  t.equal(hostName('A.Example.COM:8080'), 'a.example.com');
  t.equal(hostName('[::1]:80'), '[::1]');
  t.equal(hostName('localhost'), 'localhost');
  t.equal(hostName(undefined), undefined);
});
