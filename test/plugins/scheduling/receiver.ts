import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { FastifyInstance } from 'fastify';

export interface Hit {
  n: number;
  at: number;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  hits: Hit[];
  waitFor(count: number, ms?: number): Promise<void>;
}

/** A real loopback HTTP receiver; `reply` decides each answer (default 200). */
export async function receiver(
  t: { teardown(fn: () => unknown): void },
  reply: (hit: Hit) => Reply | Promise<Reply> = () => ({ status: 200 })
): Promise<Receiver> {
  const hits: Hit[] = [];
  const server = createServer((req, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const hit: Hit = { n: hits.length + 1, at: Date.now(), url: req.url ?? '/', headers: req.headers, body };
      hits.push(hit);
      const r = await reply(hit);
      res.writeHead(r.status, r.headers ?? {});
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      })
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    async waitFor(count, ms = 15_000) {
      const end = Date.now() + ms;
      while (hits.length < count) {
        if (Date.now() > end) throw new Error(`receiver got ${hits.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

export async function accountSecret(app: FastifyInstance, auth: Record<string, string>): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/v1/scheduling/webhook/secret', headers: auth });
  if (res.statusCode !== 200) throw new Error(`secret: ${res.statusCode} ${res.body}`);
  return res.json().secret;
}

/** Verify a hit with the `standardwebhooks` package; returns the parsed payload (throws if the signature is bad). */
export function verify(secret: string, hit: Hit): unknown {
  return new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>);
}

/** Config for the area that compresses the retry schedule to milliseconds. */
export const FAST = {
  jobs: { poll_ms: 20 },
  plugins: { scheduling: { retry_schedule_seconds: [0, 0.05, 0.1, 0.1, 0.1] } },
};
