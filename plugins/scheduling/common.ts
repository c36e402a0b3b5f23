import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Svc } from '../../core/context.js';
import { iso } from '../../core/clock.js';
import { apiError } from '../../core/errors.js';
import { decodeCursor } from '../../core/http/pagination.js';
import type { SchedulingConfigT } from './config.js';
import type { AttemptOutcome } from './outbound.js';
import type { WebhookSecrets } from './secrets.js';
import type { DeliverySecrets } from './delivery-secrets.js';
import { newestFirst as page } from '../../core/db/newest-first.js';

/** What every part of the area shares. */
export interface Deps {
  svc: Svc;
  cfg: SchedulingConfigT;
  secrets: WebhookSecrets;
  /** A delivery's own secret and headers, sealed at rest. */
  deliveries: DeliverySecrets;
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

export function badField(param: string, message: string, reason: string) {
  return apiError('validation_failed', message, { param, details: { errors: [{ param, message: reason }] } });
}

export async function recordAttempt(
  db: Kysely<any>,
  refId: string,
  accountId: string,
  attempt: number,
  o: AttemptOutcome,
  startedAt: number
): Promise<void> {
  await db
    .insertInto('scheduling_attempts')
    .values({
      ref_id: refId,
      attempt,
      account_id: accountId,
      status: o.ok ? 'succeeded' : 'failed',
      response_code: o.responseCode,
      duration_ms: Math.round(o.durationMs),
      error: o.error ? o.error.slice(0, 500) : null,
      started_at: startedAt,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
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
    status: r.status as 'succeeded' | 'failed',
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
