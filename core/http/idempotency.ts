import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { apiError } from '../errors.js';
import { open, seal } from '../auth/sealed.js';
import type { Svc } from '../context.js';

/** The body field every idempotent route's schema declares (the header works too). */
export const IdempotencyKey = Type.String({ minLength: 1, maxLength: 255, description: 'Retries with the same key and body return the first response; kept 24 h.' });

/** JSON with sorted keys, so `{a,b}` and `{b,a}` hash the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().filter((k) => k !== 'idempotency_key').map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function keyOf(req: FastifyRequest): string | undefined {
  const fromBody = (req.body as { idempotency_key?: unknown } | undefined)?.idempotency_key;
  if (typeof fromBody === 'string' && fromBody) return fromBody;
  const h = req.headers['idempotency-key'];
  return typeof h === 'string' && h ? h : undefined;
}

/**
 * Idempotency keys, as the conventions say: scoped to the account and the endpoint, kept
 * `limits.idempotency_ttl_seconds`. The first call claims the key (an insert that a primary
 * key makes once-only, on SQLite and PostgreSQL alike); a retry with the same body gets the
 * stored response, a different body 409, a retry while the first runs 409 too. Responses
 * with a 5xx status are not kept, so the caller can retry them.
 */
export function installIdempotency(app: FastifyInstance): void {
  // Route-level hooks, attached only to routes that declare `idempotent`: the rest of the
  // API does not pay three hooks a request for nothing.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    const add = <T>(existing: T | T[] | undefined, hook: T): T[] => [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook];
    route.preHandler = add(route.preHandler as any, claim) as any;
    route.onSend = add(route.onSend as any, store) as any;
    route.onResponse = add(route.onResponse as any, release) as any;
  });

  async function claim(req: FastifyRequest, reply: FastifyReply) {
    if (!req.principal) return;
    const key = keyOf(req);
    if (!key) return;
    if (key.length > 255) throw apiError('validation_failed', 'idempotency_key must be at most 255 characters.', { param: 'idempotency_key' });
    const db = app.svc.db;
    const accountId = req.principal.accountId;
    const endpoint = `${req.method} ${req.routeOptions.url}`;
    const bodyHash = createHash('sha256').update(`${canonical(req.params)}|${canonical(req.body ?? null)}`).digest('hex');
    const now = Date.now();
    const ttl = app.svc.config.limits.idempotency_ttl_seconds * 1000;
    for (let round = 0; round < 2; round++) {
      try {
        await db.insertInto('idempotency_keys').values({
          account_id: accountId, endpoint, key, body_hash: bodyHash, state: 'running', status: null, response: null, created_at: now, expires_at: now + ttl,
        }).execute();
        req.idem = { accountId, endpoint, key };
        return;
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
      }
      const row = await db.selectFrom('idempotency_keys').selectAll()
        .where('account_id', '=', accountId).where('endpoint', '=', endpoint).where('key', '=', key).executeTakeFirst();
      if (!row) continue; // removed between the insert and the read: claim it again
      if (Number(row.expires_at) <= now) {
        await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('endpoint', '=', endpoint).where('key', '=', key)
          .where('expires_at', '<=', now).execute();
        continue;
      }
      if (row.body_hash !== bodyHash) throw apiError('idempotency_key_reused', 'This idempotency key was used with a different request body. Use a new key for a new request.', { param: 'idempotency_key' });
      if (row.state !== 'done') throw apiError('idempotency_in_progress', 'A request with this idempotency key is still running. Retry when it has finished.', { param: 'idempotency_key', headers: { 'retry-after': '1' } });
      const stored = { status: Number(row.status), body: open(app.svc.idempotencyKey, row.response, `${accountId}|${endpoint}|${key}`) };
      if (req.routeOptions.config.replayIdempotent?.(req, reply, stored)) return reply;
      reply.header('idempotent-replayed', 'true');
      return reply.code(stored.status).type('application/json; charset=utf-8').send(stored.body);
    }
    throw apiError('idempotency_in_progress', 'The idempotency key is contended; retry.', { param: 'idempotency_key' });
  }

  async function store(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    await keepIdempotentResponse(app.svc, req, reply.statusCode, typeof payload === 'string' ? payload : undefined);
    return payload;
  }

  // A request that never reached onSend (client gone mid-handler) must not leave the key stuck.
  async function release(req: FastifyRequest) {
    const idem = req.idem;
    if (!idem) return;
    await app.svc.db.deleteFrom('idempotency_keys').where('account_id', '=', idem.accountId).where('endpoint', '=', idem.endpoint).where('key', '=', idem.key)
      .where('state', '=', 'running').execute();
  }
}

/**
 * Store the answer to a request that claimed an idempotency key, for its replays: what the
 * onSend hook does for JSON replies, and what a route that writes its own reply (a stream)
 * calls when its answer is complete (see `replayIdempotent` in core/context.ts). A 5xx or a
 * body that cannot be kept gives the key back instead, so the caller can retry. Does nothing
 * for a request without a key, or a second time.
 */
export async function keepIdempotentResponse(svc: Pick<Svc, 'db' | 'idempotencyKey'>, req: FastifyRequest, status: number, body: string | undefined): Promise<void> {
  const idem = req.idem;
  if (!idem) return;
  req.idem = undefined; // from here the onResponse release leaves the row alone
  if (status >= 500 || body === undefined) {
    await svc.db.deleteFrom('idempotency_keys').where('account_id', '=', idem.accountId).where('endpoint', '=', idem.endpoint).where('key', '=', idem.key).execute();
    return;
  }
  // Sealed: the response of a key-creating call carries the key's secret.
  const sealed = seal(svc.idempotencyKey, body, `${idem.accountId}|${idem.endpoint}|${idem.key}`);
  await svc.db.updateTable('idempotency_keys').set({ state: 'done', status, response: sealed })
    .where('account_id', '=', idem.accountId).where('endpoint', '=', idem.endpoint).where('key', '=', idem.key).execute();
}

export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}
