import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { apiError, fieldError, now, usdToMicros, type Svc } from '../../core/kit/area.js';
import type { AnalyticsConfigT } from './config.js';

/** An event as the routes hand it over: checked for shape, not yet for size and time. */
export interface IncomingEvent {
  event: string;
  distinct_id: string;
  properties?: Record<string, unknown>;
  timestamp?: string;
  uuid?: string;
}

interface EventRow {
  account_id: string;
  uuid: string;
  event: string;
  distinct_id: string;
  ts: number;
  properties: string;
  received_at: number;
}

/** Epoch ms of an ISO 8601 time, or a 400 naming the field. */
export function parseTime(value: string, param: string): number {
  // Date.parse takes more than ISO 8601 ("Tue, 1 Dec 2026"); the wire's times start with a date.
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw fieldError(param, 'is not an ISO 8601 time (2026-11-22T05:48:27.123Z)');
  return ms;
}

/**
 * Every event of a call checked and made into its row before anything is written: a call with
 * one bad event stores none of them.
 */
export function eventRows(
  accountId: string,
  events: readonly IncomingEvent[],
  cfg: AnalyticsConfigT,
  param: (i: number) => string
): EventRow[] {
  if (events.length > cfg.max_batch_events)
    throw apiError(
      'payload_too_large',
      `The call has ${events.length} events, over the cap of ${cfg.max_batch_events} a call.`,
      { param: param(-1), details: { max_items: cfg.max_batch_events } }
    );
  const received = now();
  return events.map((e, i) => {
    const properties = JSON.stringify(e.properties ?? {});
    if (Buffer.byteLength(properties) > cfg.max_event_bytes)
      throw apiError(
        'payload_too_large',
        `${param(i)}.properties is over the cap of ${cfg.max_event_bytes} bytes of JSON an event.`,
        { param: `${param(i)}.properties`, details: { max_bytes: cfg.max_event_bytes } }
      );
    return {
      account_id: accountId,
      uuid: e.uuid ?? randomUUID(),
      event: e.event,
      distinct_id: e.distinct_id,
      ts: e.timestamp === undefined ? received : parseTime(e.timestamp, `${param(i)}.timestamp`),
      properties,
      received_at: received,
    };
  });
}

/** What a call that stores events charges, in micro-USD (rounded up to a whole micro-USD). */
export function ingestPrice(cfg: AnalyticsConfigT, stored: number): number {
  return Math.ceil((usdToMicros(cfg.price_per_1000_events_usd) * stored) / 1000);
}

/**
 * Stores rows, skipping uuids stored before, and charges what was stored in the same
 * transaction: acknowledged means committed, and a charge the wallet refuses (402) leaves
 * nothing behind.
 */
export async function storeEvents(
  svc: Svc,
  cfg: AnalyticsConfigT,
  accountId: string,
  rows: EventRow[],
  ref: string
): Promise<{ accepted: number; duplicates: number; micros: number }> {
  if (!rows.length) return { accepted: 0, duplicates: 0, micros: 0 };
  return svc.db.transaction().execute(async (trx) => {
    let accepted = 0;
    // SQLite binds at most 32,766 parameters a statement; seven a row.
    for (let i = 0; i < rows.length; i += 2000) {
      const r = await trx
        .insertInto('analytics_events')
        .values(rows.slice(i, i + 2000))
        .onConflict((oc) => oc.columns(['account_id', 'uuid']).doNothing())
        .executeTakeFirst();
      accepted += Number(r.numInsertedOrUpdatedRows ?? 0);
    }
    const micros = ingestPrice(cfg, accepted);
    if (micros > 0) await svc.wallet.debit(accountId, micros, 'usage', ref, trx, { capability: 'analytics.track' });
    return { accepted, duplicates: rows.length - accepted, micros };
  });
}

type Db = Kysely<any> | Transaction<any>;

async function personOf(q: Db, accountId: string, distinctId: string): Promise<string | undefined> {
  const row = await q
    .selectFrom('analytics_people')
    .select('person_id')
    .where('account_id', '=', accountId)
    .where('distinct_id', '=', distinctId)
    .executeTakeFirst();
  return row?.person_id;
}

async function upsertPerson(q: Db, accountId: string, distinctId: string, personId: string, traits?: object) {
  const at = now();
  const old = await q
    .selectFrom('analytics_people')
    .select('traits')
    .where('account_id', '=', accountId)
    .where('distinct_id', '=', distinctId)
    .executeTakeFirst();
  const merged = JSON.stringify({ ...(old ? JSON.parse(old.traits) : {}), ...(traits ?? {}) });
  if (old)
    await q
      .updateTable('analytics_people')
      .set({ person_id: personId, traits: merged, updated_at: at })
      .where('account_id', '=', accountId)
      .where('distinct_id', '=', distinctId)
      .execute();
  else
    await q
      .insertInto('analytics_people')
      .values({ account_id: accountId, distinct_id: distinctId, person_id: personId, traits: merged, updated_at: at })
      .execute();
}

/**
 * Makes `distinctId` and `userId` one person. The person is the one `userId` already belongs to
 * (else `userId` itself); every id that belonged to `distinctId`'s person moves to it, so a
 * lookup is always one step (distinct id → person). An id already merged into another
 * identified person stays there (as PostHog refuses to merge two identified users); its
 * traits are still updated. Without a user id only the traits change.
 */
export async function identify(
  db: Kysely<any>,
  accountId: string,
  distinctId: string,
  userId: string | undefined,
  traits: Record<string, unknown> | undefined
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (userId === undefined || userId === distinctId) {
      const person = (await personOf(trx, accountId, distinctId)) ?? distinctId;
      await upsertPerson(trx, accountId, distinctId, person, traits);
      return;
    }
    const target = (await personOf(trx, accountId, userId)) ?? userId;
    const current = (await personOf(trx, accountId, distinctId)) ?? distinctId;
    if (current !== distinctId && current !== target) {
      await upsertPerson(trx, accountId, distinctId, current, traits);
      return;
    }
    await upsertPerson(trx, accountId, userId, target, traits);
    await upsertPerson(trx, accountId, distinctId, target);
    await trx
      .updateTable('analytics_people')
      .set({ person_id: target, updated_at: now() })
      .where('account_id', '=', accountId)
      .where('person_id', '=', distinctId)
      .execute();
  });
}

/** A person by any of their distinct ids: every id merged into them and their traits. */
export async function getPerson(db: Kysely<any>, accountId: string, distinctId: string) {
  const person = (await personOf(db, accountId, distinctId)) ?? distinctId;
  const rows = await db
    .selectFrom('analytics_people')
    .select(['distinct_id', 'traits'])
    .where('account_id', '=', accountId)
    .where('person_id', '=', person)
    .orderBy('distinct_id')
    .execute();
  const ids = new Set<string>(rows.map((r) => r.distinct_id));
  if (!ids.size) {
    const seen = await db
      .selectFrom('analytics_events')
      .select('uuid')
      .where('account_id', '=', accountId)
      .where('distinct_id', '=', distinctId)
      .limit(1)
      .executeTakeFirst();
    if (!seen) throw apiError('not_found', `No person with distinct id ${distinctId}.`);
    ids.add(distinctId);
  }
  const traits = Object.assign({}, ...rows.map((r) => JSON.parse(r.traits)));
  return { person_id: person, distinct_ids: [...ids], traits };
}
