import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { apiError } from '../errors.js';
import { base62 } from '../ids.js';
import { open, seal } from '../auth/sealed.js';
import type { Svc } from '../context.js';
import { type DeferredCharge, DeferredCharges } from '../wallet/deferred-charges.js';

/** The body field every idempotent route's schema declares (the header works too). */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Retries with the same key and body return the first response; kept 24 h.',
});

/** JSON with sorted keys, so `{a,b}` and `{b,a}` hash the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => k !== 'idempotency_key')
      .map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`)
      .join(',')}}`;
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
 * Statuses whose answer is not kept, so a retry with the same key runs again (as Stripe does,
 * a result is saved once the request began executing): 400, 413 and 415 refuse the request as
 * sent (a corrected retry must not be told the key was used), 429 did not run it; and 5xx.
 * Everything else (402, 403, 404, 409, 422…) is the outcome of a request that ran, and replayed.
 */
const NOT_KEPT = new Set([400, 413, 415, 429]);

export function keepsIdempotentResult(status: number): boolean {
  return status < 500 && !NOT_KEPT.has(status);
}

export type Claim = NonNullable<FastifyRequest['idem']>;

/** Who holds a claim: this process, and this request in it (a takeover changes the owner). */
const NODE = `${hostname()}:${process.pid}`;

export const whereClaim = <Q extends { where: (...a: any[]) => Q }>(q: Q, c: Claim): Q =>
  q
    .where('account_id', '=', c.accountId)
    .where('endpoint', '=', c.endpoint)
    .where('key', '=', c.key)
    .where('owner', '=', c.owner);

/**
 * Idempotency keys, as the conventions say: scoped to the account and the endpoint, kept
 * `limits.idempotency_ttl_seconds`. The first call claims the key (an insert that a primary
 * key makes once-only, on SQLite and PostgreSQL alike); a retry with the same body gets the
 * stored response, a different body 409, a retry while the first runs 409 too. Answers that
 * keepsIdempotentResult refuses are not kept, so the caller can retry them.
 *
 * A claim has an owner (node, process, request) and a lease: `limits.idempotency_lease_seconds`
 * from the claim, renewed while the request runs, and at least that long past the deadline of
 * any vendor call the request makes (Meter.onDeadline). A node that dies stops renewing; once
 * the lease lapses a retry on any node takes the claim over and runs the request. Every write
 * of a claim is fenced by its owner, so a request that lost its claim cannot store over the
 * one that took it.
 */
export function installIdempotency(app: FastifyInstance): void {
  const leaseMs = app.svc.config.limits.idempotency_lease_seconds * 1000;
  const running = new Set<FastifyRequest>();
  const log = app.svc.log.child({ part: 'idempotency' });

  // Route-level hooks, attached only to routes that declare `idempotent`: the rest of the
  // API does not pay three hooks a request for nothing.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    const add = <T>(existing: T | T[] | undefined, hook: T): T[] => [
      ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
      hook,
    ];
    route.preHandler = add(route.preHandler as any, claim) as any;
    route.onSend = add(route.onSend as any, store) as any;
    route.onResponse = add(route.onResponse as any, release) as any;
  });

  /** Move a claim's lease to `until` (never back); false when the claim is no longer ours. */
  async function extend(c: Claim, until: number): Promise<boolean> {
    if (until <= c.leaseUntil) return true;
    c.leaseUntil = until;
    const r = await whereClaim(app.svc.db.updateTable('idempotency_keys').set({ lease_until: until }), c)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  function extendOrWarn(c: Claim, until: number): void {
    extend(c, until).then(
      (ours) => {
        if (!ours)
          log.warn(
            { key: c.key, endpoint: c.endpoint },
            'idempotency claim lost while its request ran: another request took it over'
          );
      },
      (e) => log.warn({ err: e }, 'idempotency lease renewal failed')
    );
  }

  // Renew the claims of requests still running here a third of a lease before they lapse.
  const renewer = setInterval(
    () => {
      const soon = Date.now() + (leaseMs * 2) / 3;
      for (const req of running) {
        const c = req.idem;
        if (!c) running.delete(req);
        else if (c.leaseUntil < soon) extendOrWarn(c, Date.now() + leaseMs);
      }
    },
    Math.max(50, Math.floor(leaseMs / 3))
  );
  renewer.unref();
  app.addHook('onClose', async () => clearInterval(renewer));

  function hold(req: FastifyRequest, c: Claim): void {
    req.idem = c;
    running.add(req);
    // Its charges are written with its answer (keepIdempotentResponse, idempotentTransaction).
    req.meter.charges = new DeferredCharges();
    // A vendor call's deadline: the request may run until then, so the claim must not lapse before.
    req.meter.onDeadline = (deadline) => {
      if (req.idem === c) extendOrWarn(c, deadline + leaseMs);
    };
  }

  async function claim(req: FastifyRequest, reply: FastifyReply) {
    if (!req.principal) return;
    const key = keyOf(req);
    if (!key) return;
    if (key.length > 255)
      throw apiError('validation_failed', 'idempotency_key must be at most 255 characters.', {
        param: 'idempotency_key',
      });
    const db = app.svc.db;
    const accountId = req.principal.accountId;
    const endpoint = `${req.method} ${req.routeOptions.url}`;
    const extra = req.routeOptions.config.idempotencyExtra?.(req);
    const bodyHash = createHash('sha256')
      .update(`${canonical(req.params)}|${canonical(req.body ?? null)}${extra === undefined ? '' : `|${extra}`}`)
      .digest('hex');
    const ttl = app.svc.config.limits.idempotency_ttl_seconds * 1000;
    const pk = (q: any) =>
      q.where('account_id', '=', accountId).where('endpoint', '=', endpoint).where('key', '=', key);
    for (let round = 0; round < 3; round++) {
      const now = Date.now();
      const mine: Claim = { accountId, endpoint, key, owner: `${NODE}:${base62(8)}`, leaseUntil: now + leaseMs };
      try {
        await db
          .insertInto('idempotency_keys')
          .values({
            account_id: accountId,
            endpoint,
            key,
            body_hash: bodyHash,
            state: 'running',
            status: null,
            response: null,
            created_at: now,
            expires_at: now + ttl,
            owner: mine.owner,
            lease_until: mine.leaseUntil,
          })
          .execute();
        return hold(req, mine);
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
      }
      const row = await pk(db.selectFrom('idempotency_keys').selectAll()).executeTakeFirst();
      if (!row) continue; // removed between the insert and the read: claim it again
      if (Number(row.expires_at) <= now) {
        await pk(db.deleteFrom('idempotency_keys')).where('expires_at', '<=', now).execute();
        continue;
      }
      if (row.body_hash !== bodyHash)
        throw apiError(
          'idempotency_key_reused',
          'This idempotency key was used with a different request body. Use a new key for a new request.',
          { param: 'idempotency_key' }
        );
      if (row.state === 'done') {
        const stored = {
          status: Number(row.status),
          body: open(app.svc.idempotencyKey, row.response, `${accountId}|${endpoint}|${key}`),
        };
        if (req.routeOptions.config.replayIdempotent?.(req, reply, stored)) return reply;
        reply.header('idempotent-replayed', 'true');
        return reply.code(stored.status).type('application/json; charset=utf-8').send(stored.body);
      }
      if (Number(row.lease_until ?? 0) > now) {
        throw apiError(
          'idempotency_in_progress',
          'A request with this idempotency key is still running. Retry when it has finished.',
          {
            param: 'idempotency_key',
            headers: { 'retry-after': '1' },
          }
        );
      }
      // Its owner stopped renewing (it died) and any call it made is past its deadline: take
      // the claim over, conditional on nobody else having done so since the read.
      const took = await pk(db.updateTable('idempotency_keys').set({ owner: mine.owner, lease_until: mine.leaseUntil }))
        .where('state', '=', 'running')
        .where('owner', row.owner === null ? 'is' : '=', row.owner)
        .where('lease_until', row.lease_until === null ? 'is' : '=', row.lease_until)
        .executeTakeFirst();
      if (Number(took.numUpdatedRows) === 1) {
        // No owner: a request that failed gave it back with its attempt (giveBack), not a death.
        if (row.owner !== null)
          log.warn(
            { key, endpoint, previous_owner: row.owner },
            'idempotency claim lapsed (its owner stopped renewing it); running the request again'
          );
        return hold(req, mine);
      }
    }
    throw apiError('idempotency_in_progress', 'The idempotency key is contended; retry.', {
      param: 'idempotency_key',
      headers: { 'retry-after': '1' },
    });
  }

  async function store(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    await keepIdempotentResponse(app.svc, req, reply.statusCode, typeof payload === 'string' ? payload : undefined);
    return payload;
  }

  // A request that never reached onSend (client gone mid-handler) must not leave the key stuck,
  // nor its calls unpaid (a stream that broke, a client gone after the vendor answered).
  async function release(req: FastifyRequest) {
    running.delete(req);
    await settleAlone(app.svc, req.meter?.charges?.take());
    const idem = req.idem;
    if (!idem) return;
    req.idem = undefined;
    await giveBack(app.svc.db, idem);
  }
}

/**
 * Give a claim back so that a retry runs the request again: deleted, unless it recorded an
 * attempt (recordAttempt), an effect outside the database that may have happened unseen (a
 * checkout opened by a vendor that then timed out or answered 5xx). That claim is kept, with
 * no owner and its lease lapsed, so the retry takes it over at once and makes the effect again
 * under the same name (the vendor's idempotency key) rather than a second one under a new name;
 * its body must match, as any retry's (another is 409 idempotency_key_reused).
 */
export async function giveBack(db: Kysely<any>, idem: Claim): Promise<void> {
  await whereClaim(db.updateTable('idempotency_keys').set({ owner: null, lease_until: 0 }), idem)
    .where('state', '=', 'running')
    .where('attempt', 'is not', null)
    .execute();
  await whereClaim(db.deleteFrom('idempotency_keys'), idem).where('state', '=', 'running').execute();
}

/**
 * Store the answer to a request that claimed an idempotency key, for its replays: what the
 * onSend hook does for JSON replies, and what a route that writes its own reply (a stream)
 * calls when its answer is complete (see `replayIdempotent` in core/context.ts). An answer
 * keepsIdempotentResult refuses, or a body that cannot be kept, gives the key back instead,
 * so the caller can retry. Does nothing for a request without a key, or a second time, or
 * when the claim was taken over (fenced by its owner).
 *
 * The request's charges (Meter.charges) are written in the transaction that stores the answer:
 * if it fails, neither is kept, the holds go back and so does the key, and the retry runs and
 * charges once. `sent`: the answer already reached the caller (a stream), who then pays for it
 * even when it could not be kept.
 */
export async function keepIdempotentResponse(
  svc: Pick<Svc, 'db' | 'idempotencyKey' | 'wallet'>,
  req: FastifyRequest,
  status: number,
  body: string | undefined,
  sent = false
): Promise<void> {
  const idem = req.idem;
  const charges = req.meter?.charges?.take() ?? [];
  if (!idem) return settleAlone(svc, charges);
  req.idem = undefined; // from here the onResponse release and the lease renewal leave the row alone
  if (!keepsIdempotentResult(status) || body === undefined) {
    await settleAlone(svc, charges);
    await giveBack(svc.db, idem);
    return;
  }
  try {
    await svc.db.transaction().execute(async (trx) => {
      await svc.wallet.settleDeferred(trx, charges);
      await storeAnswer(trx, svc.idempotencyKey, idem, status, body);
    });
  } catch (e) {
    if (sent) {
      svc.wallet.rolledBack(charges);
      await settleAlone(svc, charges);
    } else await svc.wallet.releaseDeferred(charges);
    await giveBack(svc.db, idem);
    throw e;
  }
}

/** Write a request's deferred charges in a transaction of their own (no answer to keep with them). */
export async function settleAlone(svc: Pick<Svc, 'db' | 'wallet'>, charges: readonly DeferredCharge[] = []) {
  if (charges.length) await svc.db.transaction().execute((trx) => svc.wallet.settleDeferred(trx, charges));
}

/** Mark a claim done with its answer; false when the claim is no longer this request's (taken over). */
export async function storeAnswer(
  db: Kysely<any>,
  sealKey: Buffer,
  idem: Claim,
  status: number,
  body: string
): Promise<boolean> {
  // Sealed: the response of a key-creating call carries the key's secret.
  const sealed = seal(sealKey, body, `${idem.accountId}|${idem.endpoint}|${idem.key}`);
  const r = await whereClaim(
    db.updateTable('idempotency_keys').set({ state: 'done', status, response: sealed }),
    idem
  ).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** 409 for a request whose claim another request took over while it ran (its writes are not kept). */
export function claimTakenOver() {
  return apiError(
    'idempotency_in_progress',
    'Another request took this idempotency key over while this one ran; nothing was done here. Retry to get its answer.',
    { param: 'idempotency_key', headers: { 'retry-after': '1' } }
  );
}

export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return (
    err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}
