// The local app both tunnels expose: `GET /json` a fixed 1 KiB JSON answer, `GET /download`
// 16 MiB streamed in 64 KiB writes that wait for the socket (as a file server would).
import http from 'node:http';

const json = Buffer.from(JSON.stringify({ ok: true, pad: 'x'.repeat(1024 - 20) }));
const CHUNK = Buffer.alloc(64 * 1024, 7);
const SIZE = 16 * 1024 * 1024;

const server = http.createServer((req, res) => {
  if (req.url === '/json') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
    return res.end(json);
  }
  if (req.url === '/download') {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': SIZE });
    let sent = 0;
    const more = () => {
      while (sent < SIZE) {
        sent += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', more);
      }
      res.end();
    };
    return more();
  }
  res.writeHead(404).end();
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
