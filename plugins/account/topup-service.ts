import type { Kysely, Transaction } from 'kysely';
import {
  type Svc,
  type Meter,
  newId,
  iso,
  apiError,
  microsToUsd,
  type CheckoutInput,
  type CheckoutOutput,
  newestFirst,
  fieldError,
} from '../../core/kit/area.js';

// Top-ups: a pending record and a hosted checkout session at a payments vendor; the
// checkout's outcome moves the record once, out of pending, and a success credits the
// wallet in the same transaction as that move.

export interface TopupRow {
  topup_id: string;
  account_id: string;
  amount_micros: number;
  state: string;
  vendor: string;
  session_id: string;
  checkout_url: string;
  return_url: string | null;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
}

type Db = Kysely<any> | Transaction<any>;

function row(r: any): TopupRow {
  return {
    ...r,
    amount_micros: Number(r.amount_micros),
    created_at: Number(r.created_at),
    expires_at: Number(r.expires_at),
    completed_at: r.completed_at === null ? null : Number(r.completed_at),
  };
}

export function wireTopup(svc: Svc, t: TopupRow) {
  return {
    topup_id: t.topup_id,
    amount_usd: microsToUsd(t.amount_micros),
    currency: svc.config.wallet.currency,
    state: t.state as 'pending',
    ...(t.state === 'pending' ? { next_action_url: t.checkout_url } : {}),
    checkout_url: t.checkout_url,
    ...(t.return_url ? { return_url: t.return_url } : {}),
    created_at: iso(t.created_at),
    expires_at: iso(t.expires_at),
    ...(t.completed_at !== null ? { completed_at: iso(t.completed_at) } : {}),
  };
}

/** A whole number of cents: card processors charge cents, so more decimals would not be honest. */
export function checkCents(amountUsd: number, param = 'amount_usd'): void {
  const cents = amountUsd * 100;
  if (Math.abs(cents - Math.round(cents)) > 1e-6) {
    throw fieldError(param, 'must have at most two decimals');
  }
}

export interface CreateTopup {
  accountId: string;
  region?: string;
  amountUsd: number;
  returnUrl?: string;
  meter?: Meter;
}

/** Open a checkout session at the payments vendor and record the pending top-up. */
export async function createTopup(svc: Svc, req: CreateTopup): Promise<TopupRow> {
  const r = await openCheckout(svc, req, newId('top'));
  await recordTopup(svc.db, r);
  return r;
}

/**
 * Open the checkout session of top-up `topupId` at the payments vendor; the pending record to
 * write is returned (recordTopup), not written. The vendor gets `topupId` as the session's
 * reference and its idempotency key: a retry after a crash, or after a vendor timeout or 5xx
 * (the vendor may have opened the session unseen), opens the same top-up again (recordAttempt)
 * and gets the same session back.
 */
export async function openCheckout(svc: Svc, req: CreateTopup, topupId: string): Promise<TopupRow> {
  checkCents(req.amountUsd);
  const amountMicros = Math.round(req.amountUsd * 100) * 10_000;
  const now = Date.now();
  const expiresAt = now + svc.config.limits.topup_ttl_seconds * 1000;
  // charge:false: opening a checkout costs the caller nothing; the capability is declared
  // non-idempotent, so the router never opens a second session at another vendor.
  const res = await svc.router.call<CheckoutInput, CheckoutOutput>(
    'payments.checkout',
    {
      topup_id: topupId,
      idempotency_key: topupId,
      amount_usd: microsToUsd(amountMicros),
      currency: svc.config.wallet.currency,
      description: `Wallet top-up ${topupId}`,
      expires_at: expiresAt,
      ...(req.returnUrl ? { return_url: req.returnUrl } : {}),
    },
    { accountId: req.accountId, region: req.region, charge: false, meter: req.meter, ref: topupId }
  );
  const r: TopupRow = {
    topup_id: topupId,
    account_id: req.accountId,
    amount_micros: amountMicros,
    state: 'pending',
    vendor: res.vendor,
    session_id: res.output.session_id,
    checkout_url: res.output.checkout_url,
    return_url: req.returnUrl ?? null,
    created_at: now,
    expires_at: expiresAt,
    completed_at: null,
  };
  return r;
}

export async function recordTopup(db: Db, r: TopupRow): Promise<void> {
  await db.insertInto('topups').values(r).execute();
}

/** Pending top-ups past their expiry become expired (lazily, whenever they are read). */
async function expireDue(db: Db, column: 'account_id' | 'topup_id' | 'session_id', value: string): Promise<void> {
  const now = Date.now();
  await db
    .updateTable('topups')
    .set({ state: 'expired', completed_at: now })
    .where(column, '=', value)
    .where('state', '=', 'pending')
    .where('expires_at', '<=', now)
    .execute();
}

export async function getTopup(svc: Svc, accountId: string, topupId: string): Promise<TopupRow> {
  await expireDue(svc.db, 'topup_id', topupId);
  const r = await svc.db
    .selectFrom('topups')
    .selectAll()
    .where('topup_id', '=', topupId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!r) throw apiError('not_found', `No top-up ${topupId} in this account.`, { param: 'topup_id' });
  return row(r);
}

export async function listTopups(
  svc: Svc,
  accountId: string,
  limit: number,
  before?: { t: number; id: string }
): Promise<TopupRow[]> {
  await expireDue(svc.db, 'account_id', accountId);
  const q = svc.db.selectFrom('topups').selectAll().where('account_id', '=', accountId);
  return (await newestFirst(q, 'topup_id', limit, before).execute()).map(row);
}

export async function findBySession(svc: Svc, sessionId: string): Promise<TopupRow | undefined> {
  await expireDue(svc.db, 'session_id', sessionId);
  const r = await svc.db.selectFrom('topups').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
  return r ? row(r) : undefined;
}

/**
 * Move a pending, unexpired top-up to `state`. One conditional UPDATE decides, so of any
 * number of concurrent calls exactly one moves it; a success credits the wallet inside the
 * same transaction, so the credit happens exactly when the move does. Returns the record
 * after the attempt and whether this call made the move.
 */
export async function settleTopup(
  svc: Svc,
  sessionId: string,
  state: 'succeeded' | 'canceled' | 'failed' | 'expired'
): Promise<{ topup: TopupRow | undefined; moved: boolean }> {
  const moved = await svc.db.transaction().execute(async (trx) => {
    const now = Date.now();
    const res = await trx
      .updateTable('topups')
      .set({ state, completed_at: now })
      .where('session_id', '=', sessionId)
      .where('state', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return false;
    if (state === 'succeeded') {
      const t = row(
        await trx.selectFrom('topups').selectAll().where('session_id', '=', sessionId).executeTakeFirstOrThrow()
      );
      await svc.wallet.credit(t.account_id, t.amount_micros, 'topup', t.topup_id, trx);
    }
    return true;
  });
  return { topup: await findBySession(svc, sessionId), moved };
}
