import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import {
  apiError,
  decodeCursor,
  idempotentTransaction,
  iso,
  isApiError,
  newId,
  newestFirst,
  pageOf,
  recordAttempt,
  type RefundInput,
  type RefundOutput,
  type Svc,
} from '../../core/kit/area.js';
import { chargeRow, wireCharge, type ChargeRow, type Charges } from './charges.js';
import { formatAmount } from './currencies.js';
import type { RefundBodyT, RefundListQueryT, RefundT } from './schemas.js';

// Refunds. The amount is taken from the charge first, in one conditional UPDATE that adds it
// to `amount_refunded` only while the sum stays within the charge: of any number of concurrent
// refunds, those that fit commit and the rest are 422, on SQLite and PostgreSQL alike (a row
// lock re-checks the condition). The pending refund commits with that; then the vendor is
// called under the refund id as its idempotency key; its answer, the refund's state, the
// events and the idempotent answer commit together. A refund the vendor refused gives its
// amount back; one whose outcome is unknown (a timeout) stays pending with its amount held,
// and a retry with the same idempotency key asks the vendor again under the same key.

export const RETRY_JOB = 'billing.refund.retry';

export interface RefundRow {
  refund_id: string;
  account_id: string;
  charge_id: string;
  amount: number;
  state: string;
  vendor_refund_ref: string | null;
  failure_code: string | null;
  created_at: number;
  updated_at: number;
}

const REFUNDABLE = ['succeeded', 'partially_refunded'];

function refundRow(r: any): RefundRow {
  return { ...r, amount: Number(r.amount), created_at: Number(r.created_at), updated_at: Number(r.updated_at) };
}

function wireRefund(r: RefundRow, currency: string): RefundT {
  return {
    refund_id: r.refund_id,
    charge_id: r.charge_id,
    amount: r.amount,
    currency,
    state: r.state as RefundT['state'],
    ...(r.failure_code
      ? { error: { code: r.failure_code, message: `The vendor refused the refund (${r.failure_code}).` } }
      : {}),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export class Refunds {
  constructor(
    private readonly svc: Svc,
    private readonly charges: Charges
  ) {}

  async create(req: FastifyRequest, reply: FastifyReply, body: RefundBodyT): Promise<RefundT> {
    const { svc } = this;
    const accountId = req.principal!.accountId;
    const charge = await this.charges.mine(accountId, body.charge_id);
    const { refund_id } = await recordAttempt(svc, req, () => ({ refund_id: newId('re') }));
    // A retry of a request that died after taking the amount: the same refund, asked again.
    const sent = await this.find(svc.db, refund_id);
    const refund = sent ?? (await this.reserve(charge, refund_id, body.amount));
    const out = await this.ask(refund, charge, req.meter, sent !== undefined);
    return idempotentTransaction(svc, req, reply, async (trx) => {
      const done = await this.settle(trx, refund, charge, {
        state: out.state,
        ref: out.vendor_refund_ref,
        code: out.failure_code,
      });
      return wireRefund(done, charge.currency);
    });
  }

  /**
   * Call the vendor for a pending refund under its id as the idempotency key. A refusal (4xx)
   * fails it and frees its amount; an unknown outcome (timeout, 5xx) leaves it pending, held,
   * with a job that asks again under the same key (RETRY_JOB), whose answer then settles it.
   */
  private async ask(
    refund: RefundRow,
    charge: ChargeRow,
    meter: FastifyRequest['meter'] | undefined,
    resend: boolean
  ): Promise<RefundOutput> {
    const { svc } = this;
    const input: RefundInput = {
      refund_id: refund.refund_id,
      idempotency_key: refund.refund_id,
      charge_id: charge.charge_id,
      vendor_ref: charge.vendor_ref,
      amount: refund.amount,
      currency: charge.currency,
      // Asked before: the vendor finds the refund it made, also once its key has expired.
      ...(resend ? { resend: true } : {}),
    };
    try {
      const res = await svc.router.call<RefundInput, RefundOutput>('payments.refund', input, {
        accountId: refund.account_id,
        vendor: charge.vendor,
        charge: false,
        meter,
        ref: refund.refund_id,
        idempotencyKey: refund.refund_id,
      });
      if (res.output.state === 'pending') await this.scheduleRetry(refund.refund_id);
      return res.output;
    } catch (e) {
      if (isApiError(e) && e.status < 500) await this.settle(svc.db, refund, charge, { state: 'failed', code: e.code });
      else await this.scheduleRetry(refund.refund_id);
      throw e;
    }
  }

  private async scheduleRetry(refundId: string): Promise<void> {
    await this.svc.jobs.enqueue({
      kind: RETRY_JOB,
      payload: { refund_id: refundId },
      runAt: Date.now() + this.charges.lookupDelayMs(0),
      maxAttempts: 12,
      uniqueKey: `${RETRY_JOB}:${refundId}`,
    });
  }

  /** The job: a refund still pending is asked again (same key); true when it settled. */
  async retry(refundId: string): Promise<boolean> {
    const refund = await this.find(this.svc.db, refundId);
    if (refund?.state !== 'pending') return true;
    const charge = (await this.charges.find(this.svc.db, refund.charge_id))!;
    const out = await this.ask(refund, charge, undefined, true).catch(() => undefined);
    if (!out || out.state === 'pending') return false;
    await this.settle(this.svc.db, refund, charge, {
      state: out.state,
      ref: out.vendor_refund_ref,
      code: out.failure_code,
    });
    return true;
  }

  async get(accountId: string, refundId: string): Promise<RefundT> {
    const r = await this.find(this.svc.db, refundId, accountId);
    if (!r) throw apiError('not_found', `No refund ${refundId} in this account.`, { param: 'id' });
    const charge = await this.charges.mine(accountId, r.charge_id);
    return wireRefund(r, charge.currency);
  }

  /** The account's refunds, newest first; another account's charge has none here. */
  async list(accountId: string, q: RefundListQueryT) {
    let sel = this.svc.db.selectFrom('billing_refunds').selectAll().where('account_id', '=', accountId);
    if (q.charge_id) sel = sel.where('charge_id', '=', q.charge_id);
    if (q.state) sel = sel.where('state', '=', q.state);
    const rows = (await newestFirst(sel, 'refund_id', q.limit + 1, decodeCursor(q.cursor)).execute()).map(refundRow);
    const ids = [...new Set(rows.map((r) => r.charge_id))];
    const currencies = new Map<string, string>();
    if (ids.length > 0)
      for (const c of await this.svc.db
        .selectFrom('billing_charges')
        .select(['charge_id', 'currency'])
        .where('charge_id', 'in', ids)
        .execute())
        currencies.set(c.charge_id, c.currency);
    return pageOf(
      rows,
      q.limit,
      (r) => ({ t: r.created_at, id: r.refund_id }),
      (r) => wireRefund(r, currencies.get(r.charge_id)!)
    );
  }

  async find(db: Kysely<any>, refundId: string, accountId?: string): Promise<RefundRow | undefined> {
    let q = db.selectFrom('billing_refunds').selectAll().where('refund_id', '=', refundId);
    if (accountId) q = q.where('account_id', '=', accountId);
    const r = await q.executeTakeFirst();
    return r ? refundRow(r) : undefined;
  }

  /** A refund of the charge, by the gateway's id the vendor kept, or else by the vendor's. */
  async ofCharge(
    db: Kysely<any>,
    chargeId: string,
    refundId: string | undefined,
    vendorRefundRef: string
  ): Promise<RefundRow | undefined> {
    const q = db.selectFrom('billing_refunds').selectAll().where('charge_id', '=', chargeId);
    const r = await (refundId
      ? q.where('refund_id', '=', refundId)
      : q.where('vendor_refund_ref', '=', vendorRefundRef)
    ).executeTakeFirst();
    return r ? refundRow(r) : undefined;
  }

  /** Take the amount from the charge and record the pending refund, or refuse (nothing written). */
  private async reserve(charge: ChargeRow, refundId: string, asked: number | undefined): Promise<RefundRow> {
    const { svc } = this;
    const amount = asked ?? charge.amount - charge.amount_refunded;
    return svc.db.transaction().execute(async (trx) => {
      const now = Date.now();
      const res =
        amount < 1
          ? { numUpdatedRows: 0n }
          : await trx
              .updateTable('billing_charges')
              .set({
                amount_refunded: sql`amount_refunded + ${amount}`,
                state: sql`case when amount_refunded + ${amount} >= amount then 'refunded' else 'partially_refunded' end`,
                updated_at: now,
              })
              .where('charge_id', '=', charge.charge_id)
              .where('state', 'in', REFUNDABLE)
              .where(sql<boolean>`amount_refunded + ${amount} <= amount`)
              .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1)
        throw refused(chargeRow(await this.charges.find(trx, charge.charge_id)), amount);
      const row: RefundRow = {
        refund_id: refundId,
        account_id: charge.account_id,
        charge_id: charge.charge_id,
        amount,
        state: 'pending',
        vendor_refund_ref: null,
        failure_code: null,
        created_at: now,
        updated_at: now,
      };
      await trx.insertInto('billing_refunds').values(row).execute();
      const moved = (await this.charges.find(trx, charge.charge_id))!;
      await svc.events.emit(trx, {
        accountId: charge.account_id,
        type: `charge.${moved.state}`,
        data: wireCharge(moved),
      });
      return row;
    });
  }

  /**
   * The vendor's answer on a pending refund, once (conditional on `pending`): a failed refund gives
   * its amount back to the charge. Returns the refund as it now is.
   */
  async settle(
    db: Kysely<any>,
    refund: RefundRow,
    charge: ChargeRow,
    out: { state: string; ref?: string; code?: string }
  ): Promise<RefundRow> {
    const work = async (trx: Kysely<any>) => {
      const now = Date.now();
      const res = await trx
        .updateTable('billing_refunds')
        .set({
          state: out.state,
          vendor_refund_ref: out.ref ?? null,
          failure_code: out.state === 'failed' ? (out.code ?? 'refund_failed') : null,
          updated_at: now,
        })
        .where('refund_id', '=', refund.refund_id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      const after = (await this.find(trx, refund.refund_id))!;
      if (Number(res.numUpdatedRows) !== 1 || after.state === 'pending') return after;
      await this.svc.events.emit(trx, {
        accountId: refund.account_id,
        type: `refund.${after.state}`,
        data: wireRefund(after, charge.currency),
      });
      if (after.state === 'failed') {
        await trx
          .updateTable('billing_charges')
          .set({
            amount_refunded: sql`amount_refunded - ${refund.amount}`,
            state: sql`case when amount_refunded - ${refund.amount} <= 0 then 'succeeded' else 'partially_refunded' end`,
            updated_at: now,
          })
          .where('charge_id', '=', refund.charge_id)
          .execute();
        const moved = (await this.charges.find(trx, refund.charge_id))!;
        await this.svc.events.emit(trx, {
          accountId: refund.account_id,
          type: `charge.${moved.state}`,
          data: wireCharge(moved),
        });
      }
      return after;
    };
    // Inside the route's idempotent transaction already, or a transaction of its own.
    return db.isTransaction ? work(db) : db.transaction().execute(work);
  }
}

function refused(c: ChargeRow, amount: number) {
  if (!REFUNDABLE.includes(c.state)) {
    return apiError(
      c.state === 'refunded' ? 'unprocessable' : 'invalid_state',
      c.state === 'refunded'
        ? `Charge ${c.charge_id} is refunded in full; nothing is left to refund.`
        : `Charge ${c.charge_id} is ${c.state}; only a succeeded charge can be refunded.`,
      { param: 'charge_id' }
    );
  }
  const left = c.amount - c.amount_refunded;
  return apiError(
    'unprocessable',
    `A refund of ${formatAmount(amount, c.currency)} ${c.currency} is more than the ${formatAmount(left, c.currency)} `
      + `${c.currency} left to refund of charge ${c.charge_id}.`,
    { param: 'amount', details: { amount, amount_left: left } }
  );
}
