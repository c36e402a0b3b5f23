// The floor of the AI bench's latency goal: the least any proxy in Node.js adds to a chat
// call on this machine. node:http in, undici's keep-alive Pool out (as the gateway's
// adapters), the answer's JSON parsed and a small JSON written back; no auth, no routing,
// no wallet, no validation. Printed beside the gateway's figure, never a target.
import http from 'node:http';
import { Pool } from 'undici';

const upstream = new Pool(process.env.UPSTREAM, { connections: 8, keepAliveTimeout: 60_000 });
const key = process.env.UPSTREAM_KEY;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      const { model, messages } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const up = await upstream.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model, messages }),
      });
      const answer = await up.body.json();
      const out = JSON.stringify({
        id: answer.id,
        model: answer.model,
        content: answer.choices[0].message.content,
        usage: answer.usage,
      });
      res.writeHead(up.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    } catch (e) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(e));
    }
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
