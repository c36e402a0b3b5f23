import { once } from 'node:events';
import http from 'node:http';
import t from 'tap';
import WebSocket, { WebSocketServer } from 'ws';
import { activate, ONE_NODE_ONLY } from '../../helpers/app.js';
import { twoNodes } from '../../helpers/two-nodes.js';
import { until } from '../../helpers/wait.js';
import { TunnelClient } from '../../../plugins/public-url/tunnel-client.js';

// Two gateways on one PostgreSQL and one Redis: the tunnel client connects to node A (this
// process); the public reaches node B (a real process), which forwards to A.

function call(port: number, host: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: body ? 'POST' : 'GET', headers: { ...headers, host }, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      }
    );
    req.on('error', reject);
    req.end(body);
  });
}

t.test(
  'a tunnel connected to one node serves requests and WebSockets reaching another',
  { skip: ONE_NODE_ONLY },
  async (t) => {
    const { app, base, b } = await twoNodes(t);
    const portA = Number(new URL(base).port);
    const portB = Number(new URL(b.url).port);

    const local = http.createServer((req, res) => {
      if (req.url === '/echo') return req.pipe(res);
      res.end(JSON.stringify(req.headers));
    });
    const wss = new WebSocketServer({ server: local });
    wss.on('connection', (ws) => ws.on('message', (m) => ws.send(`echo ${m}`)));
    local.listen(0, '127.0.0.1');
    await once(local, 'listening');
    t.teardown(() => {
      for (const c of wss.clients) c.terminate();
      local.closeAllConnections();
      local.close();
    });

    const a = await activate(app);
    const rec = (
      await app.inject({ method: 'POST', url: '/v1/public-url', headers: a.auth, payload: { subdomain: 'spread' } })
    ).json();
    const client = new TunnelClient({
      connectUrl: rec.connect_url,
      secret: a.key,
      port: (local.address() as { port: number }).port,
    });
    t.teardown(() => client.stop());
    const up = once(client, 'connected');
    client.start();
    await up;
    const state = async () =>
      (await app.inject({ method: 'GET', url: `/v1/public-url/${rec.url_id}`, headers: a.auth })).json().state;
    await until('the record connected', async () => (await state()) === 'connected');

    const onB = `spread.localhost:${portB}`;
    const h = await call(portB, onB, '/headers', { 'x-svc-tunnel-for': '203.0.113.7' });
    t.equal(h.status, 200, 'B serves the tunnel connected to A');
    const seen = JSON.parse(h.body);
    t.equal(seen['x-forwarded-host'], onB, 'the app sees the Host the public used');
    t.notOk(seen['x-svc-tunnel-via'] ?? seen['x-svc-tunnel-for'], 'the hop headers never reach the app');
    t.notMatch(seen['x-forwarded-for'], /203\.0\.113\.7/, "a caller's own hop header is not believed");
    t.equal((await call(portB, onB, '/echo', {}, 'x'.repeat(100_000))).body.length, 100_000, 'a body both ways');

    const spoof = await call(portA, `spread.localhost:${portA}`, '/headers', {
      'x-svc-tunnel-via': `${Date.now()}.forged`,
      'x-svc-tunnel-for': '203.0.113.8',
    });
    t.notMatch(JSON.parse(spoof.body)['x-forwarded-for'], /203\.0\.113\.8/, 'A does not believe a forged hop');

    const ws = new WebSocket(`ws://127.0.0.1:${portB}/`, { headers: { host: onB } });
    await once(ws, 'open');
    const reply = once(ws, 'message');
    ws.send('hi');
    t.equal(String((await reply)[0]), 'echo hi', 'a WebSocket through B and A');
    ws.close();

    client.stop();
    await until('the record disconnected', async () => (await state()) === 'disconnected');
    const gone = await call(portB, onB, '/headers');
    t.equal(gone.status, 502);
    t.equal(JSON.parse(gone.body).error.code, 'tunnel_not_connected', 'no client anywhere: B says so');
  }
);
