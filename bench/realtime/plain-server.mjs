// The anchor: a plain `ws` server that broadcasts each POST /publish body to every socket, the
// least a fan-out server can do (no channels, no auth, no bus, no history).
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({ noServer: true });
const server = createServer((req, res) => {
  if (req.method !== 'POST') return res.end('ok');
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    for (const ws of wss.clients) ws.send(body);
    res.end('{}');
  });
});
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws)));
server.listen(Number(process.env.PORT), '127.0.0.1');
