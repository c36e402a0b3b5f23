// The transport floor of the image bench: the least an HTTP server can do with the bench's
// request. node:http, the multipart body read into a reused buffer, the file part found by its
// delimiter, sharp's resize with the bench's settings, a small JSON answer. No auth, validation,
// billing, routing or storage. Timed beside the gateway and raw sharp, it shows how much of the
// gateway's distance from raw sharp is HTTP itself (the kernel's loopback copy, Node's parser,
// the body's copies, the load generator) and how much is the gateway's own work. Not a target.
//
// `node bench/image/floor.mjs PORT` runs the server; startFloor() starts it as a child.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { freePort, start, waitFor200 } from '../core/processes.mjs';

/** Start the floor server as a child process; resolves once it answers. */
export async function startFloor(settings) {
  const port = await freePort();
  const child = start(process.execPath, [fileURLToPath(import.meta.url), String(port), JSON.stringify(settings)]);
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/`, child, performance.now());
  return { child, base };
}

function serve(port, { width, quality, decode }) {
  const free = [];
  const server = createServer((req, res) => {
    if (req.method === 'GET') return res.end('floor');
    const length = Number(req.headers['content-length']);
    const boundary = /boundary=("?)([^";]+)\1/.exec(req.headers['content-type'] ?? '')?.[2];
    // One buffer per request in flight, reused after: what the gateway's upload slabs do.
    const i = free.findIndex((b) => b.length >= length);
    const slab = i >= 0 ? free.splice(i, 1)[0] : Buffer.allocUnsafeSlow(length);
    let at = 0;
    req.on('data', (chunk) => {
      chunk.copy(slab, at);
      at += chunk.length;
    });
    req.on('end', async () => {
      const body = slab.subarray(0, at);
      const file = body.indexOf('filename=');
      const startAt = body.indexOf('\r\n\r\n', file) + 4;
      // The whole file part is scanned for its end, as any multipart parser must.
      const end = body.indexOf(`\r\n--${boundary}`, startAt);
      try {
        if (!boundary || file < 0 || end < 0) throw new Error('not the bench upload');
        const out = await sharp(body.subarray(startAt, end), decode)
          .autoOrient()
          .resize({ width, fit: 'cover' })
          .jpeg({ quality })
          .toBuffer({ resolveWithObject: true });
        const json = JSON.stringify({ mime: 'image/jpeg', width: out.info.width, bytes: out.data.length });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
        res.end(json);
      } catch (e) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(e?.message ?? e));
      } finally {
        free.push(slab);
      }
    });
  });
  // The bench's rounds leave a connection idle for longer than Node's 5 s default.
  server.keepAliveTimeout = 120_000;
  server.listen(port, '127.0.0.1');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve(Number(process.argv[2]), JSON.parse(process.argv[3]));
