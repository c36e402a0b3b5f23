import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type Svc, iso, apiError, decodeCursor, newestFirst as page } from '../../core/kit/area.js';
import type { SchedulingConfigT } from './config.js';
import type { AttemptOutcome } from './outbound.js';
import type { WebhookSecrets } from './secrets.js';
import type { DeliverySecrets } from './delivery-secrets.js';
import type { EndpointSecrets } from './event-endpoints.js';

/** What every part of the area shares. */
export interface Deps {
  svc: Svc;
  cfg: SchedulingConfigT;
  secrets: WebhookSecrets;
  /** A delivery's own secret and headers, sealed at rest. */
  deliveries: DeliverySecrets;
  /** Event endpoints' secrets, sealed at rest. */
  endpoints: EndpointSecrets;
  log: Logger;
  userAgent: string;
}

export const KIND = {
  webhook: 'scheduling.webhook',
  cronTick: 'scheduling.cron.tick',
  cronRun: 'scheduling.cron.run',
  push: 'scheduling.queue.push',
} as const;

/** The payload as the body it will be sent as; over the cap is 413 naming the cap, before anything is written. */
export function encodePayload(payload: unknown, cfg: SchedulingConfigT, param = 'payload'): string {
  const body = JSON.stringify(payload ?? {});
  const bytes = Buffer.byteLength(body);
  if (bytes > cfg.max_payload_bytes) {
    throw apiError(
      'payload_too_large',
      `${param} is ${bytes} bytes of JSON, over the cap of ${cfg.max_payload_bytes} bytes.`,
      {
        param,
        details: {
          errors: [{ param, message: `must be at most ${cfg.max_payload_bytes} bytes of JSON` }],
          max_bytes: cfg.max_payload_bytes,
        },
      }
    );
  }
  return body;
}

/**
 * One attempt of an outbound call (a webhook, a cron run, a push), recorded before the call is
 * made: a node killed during it leaves the attempt `started` (the receiver may have had it,
 * and the next attempt carries the same webhook-id), never no trace. Its outcome is written
 * when the call returns.
 */
export async function recordedAttempt(
  db: Kysely<any>,
  refId: string,
  accountId: string,
  attempt: number,
  call: () => Promise<AttemptOutcome>
): Promise<AttemptOutcome> {
  const key = (q: any) => q.where('ref_id', '=', refId).where('attempt', '=', attempt);
  await db
    .insertInto('scheduling_attempts')
    .values({
      ref_id: refId,
      attempt,
      account_id: accountId,
      status: 'started',
      response_code: null,
      duration_ms: 0,
      error: null,
      started_at: Date.now(),
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const o = await call();
  await key(
    db.updateTable('scheduling_attempts').set({
      status: o.ok ? 'succeeded' : 'failed',
      response_code: o.responseCode,
      duration_ms: Math.round(o.durationMs),
      error: o.error ? o.error.slice(0, 500) : null,
    })
  ).execute();
  return o;
}

export async function attemptsOf(db: Kysely<any>, refIds: string[]) {
  const out = new Map<string, ReturnType<typeof wireAttempt>[]>();
  if (!refIds.length) return out;
  const rows = await db
    .selectFrom('scheduling_attempts')
    .selectAll()
    .where('ref_id', 'in', refIds)
    .orderBy('attempt')
    .execute();
  for (const r of rows) out.set(r.ref_id, [...(out.get(r.ref_id) ?? []), wireAttempt(r)]);
  return out;
}

function wireAttempt(r: any) {
  return {
    attempt: Number(r.attempt),
    status: r.status as 'started' | 'succeeded' | 'failed',
    response_code: r.response_code === null ? null : Number(r.response_code),
    duration_ms: Number(r.duration_ms),
    ...(r.error ? { error: r.error as string } : {}),
    attempted_at: iso(Number(r.started_at)),
  };
}

/**
 * One newest-first page of a query: the rows after the cursor's (created_at, id), `limit + 1`
 * of them so pageOf() can tell whether there is more.
 */
export async function newestFirst(q: any, idColumn: string, cursor: string | undefined, limit: number): Promise<any[]> {
  return page(q, idColumn, limit + 1, decodeCursor(cursor)).execute();
}
