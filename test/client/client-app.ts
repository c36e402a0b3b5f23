import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SvcClient, SvcError } from '../../client/index.js';
import { makeApp } from '../helpers/app.js';
import { until } from '../helpers/wait.js';
import type { Tap } from '../helpers/tap.js';

// The client's suites: a real gateway listening on loopback (the capture vendors of email and
// SMS on a gateway with no provider configured) and a client activated against it.

export async function clientApp(
  t: Tap,
  overrides: Record<string, unknown> = {}
): Promise<{ app: FastifyInstance; url: string; c: SvcClient }> {
  const { app } = await makeApp(t, { jobs: { poll_ms: 20 }, ...overrides });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const c = new SvcClient({ baseUrl: url });
  await c.activate();
  return { app, url, c };
}

/** Poll a record through the client until its outbox job has moved it off `queued`. */
export async function settled<R extends { state: string }>(what: string, read: () => Promise<R>): Promise<R> {
  let last: R | undefined;
  await until(`${what} sent`, async () => (last = await read()).state !== 'queued');
  return last!;
}

/** The asserts the helpers make, as tap's Test has them. */
interface Asserts {
  ok(v: unknown, msg: string): unknown;
  same(a: unknown, b: unknown, msg: string): unknown;
  match(v: unknown, pattern: unknown, msg: string): unknown;
  fail(msg: string): unknown;
}

/** That `p` rejects with a SvcError matching `expect`; the error, for more checks. */
export async function rejects(
  t: Asserts,
  p: Promise<unknown>,
  expect: Partial<SvcError>,
  msg: string
): Promise<SvcError> {
  try {
    await p;
  } catch (e) {
    t.ok(e instanceof SvcError, `${msg}: a SvcError`);
    t.match(e, expect, msg);
    return e as SvcError;
  }
  t.fail(`${msg}: did not throw`);
  throw new Error('unreachable');
}

/** Every item of an async iterator, in order. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/**
 * The ids of a list walked to its end: each once, every one expected, newest first. Items made
 * in the same millisecond may come in either order, so the order is checked on `created_at`.
 */
export function walked<T extends { created_at: string }>(
  t: Asserts,
  items: T[],
  id: (x: T) => string,
  expected: string[],
  msg: string
): void {
  t.same(items.map(id).sort(), [...expected].sort(), `${msg}: each once`);
  t.ok(
    items.every((x, i) => i === 0 || items[i - 1].created_at >= x.created_at),
    `${msg}: newest first`
  );
}
