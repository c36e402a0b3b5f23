// The baseline: a minimal Node HTTP server that streams PUT bodies to files and files to
// GET responses, on the same disk as the gateway's data dir. Run as its own process.
import { createServer } from 'node:http';
import { createReadStream, createWriteStream, mkdirSync, statSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream';

const dir = process.argv[2];
mkdirSync(dir, { recursive: true });
const server = createServer((req, res) => {
  const file = join(dir, encodeURIComponent(req.url.split('?')[0]));
  if (req.method === 'PUT') {
    const tmp = `${file}.tmp`;
    pipeline(req, createWriteStream(tmp), (err) => {
      if (err) {
        res.statusCode = 500;
        return res.end();
      }
      renameSync(tmp, file);
      res.end();
    });
  } else if (req.method === 'GET') {
    let size;
    try {
      size = statSync(file).size;
    } catch {
      res.statusCode = 404;
      return res.end();
    }
    res.setHeader('content-length', size);
    pipeline(createReadStream(file), res, () => {});
  } else {
    res.statusCode = 405;
    res.end();
  }
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
