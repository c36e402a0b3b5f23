// The ingest anchor: a plain Node.js http server taking PostHog's capture wire (POST /batch/ with
// `{ api_key, batch: [...] }`) that only appends each body to a file and answers PostHog's
// `{"status":1}` once the write is handed to the OS: the least a capture endpoint can do (no
// parsing, no validation, no dedup, no database).
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';

const out = createWriteStream(process.env.FLOOR_FILE, { flags: 'a' });
createServer((req, res) => {
  if (req.method !== 'POST') return res.end('ok');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    out.write(Buffer.concat(chunks), () => {
      res.setHeader('content-type', 'application/json');
      res.end('{"status":1}');
    });
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
