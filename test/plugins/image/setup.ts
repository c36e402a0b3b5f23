import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resultAreaApp } from '../../helpers/result-area-app.js';
import type { Tap } from '../../helpers/tap.js';

/** A listening gateway (result URLs work with fetch) and an activated account. */
export const imageApp = resultAreaApp;

/** A loopback HTTP server that answers every GET with `body` as `type`. */
export async function serveBytes(t: Tap, body: Buffer, type = 'image/png'): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': type }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/image`;
}
