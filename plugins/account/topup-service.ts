import type { Kysely, Transaction } from 'kysely';
import type { Svc } from '../../core/context.js';
import type { Meter } from '../../core/router/router.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { apiError } from '../../core/errors.js';
import { microsToUsd } from '../../core/wallet/money.js';
import type { CheckoutInput, CheckoutOutput } from '../../core/capabilities/payments.js';
import { newestFirst } from '../../core/db/newest-first.js';

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
    throw apiError('validation_failed', `${param} must have at most two decimals.`, {
      param,
      details: { errors: [{ param, message: 'must have at most two decimals' }] },
    });
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
  checkCents(req.amountUsd);
  const topupId = newId('top');
  const amountMicros = Math.round(req.amountUsd * 100) * 10_000;
  const now = Date.now();
  const expiresAt = now + svc.config.limits.topup_ttl_seconds * 1000;
  // charge:false: opening a checkout costs the caller nothing; the capability is declared
  // non-idempotent, so the router never opens a second session at another vendor.
  const res = await svc.router.call<CheckoutInput, CheckoutOutput>(
    'payments.checkout',
    {
      topup_id: topupId,
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
  await svc.db.insertInto('topups').values(r).execute();
  return r;
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
  state: 'succeeded' | 'canceled' | 'failed'
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
