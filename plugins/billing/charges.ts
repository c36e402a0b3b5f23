import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import {
  apiError,
  fieldError,
  idempotentTransaction,
  iso,
  newId,
  newestFirst,
  pageOf,
  decodeCursor,
  recordAttempt,
  type ChargeInput,
  type ChargeLookupInput,
  type ChargeOutput,
  type Svc,
} from '../../core/kit/area.js';
import type { BillingConfigT } from './config.js';
import { checkCurrency } from './currencies.js';
import type { ChargeBodyT, ChargeListQueryT, ChargeT } from './schemas.js';

// Charges: one vendor call under the charge id as the vendor's idempotency key (recorded on the
// request's idempotency claim first), then the record, its event and the idempotent answer in
// one transaction. A charge the vendor left `pending` or `requires_action` is looked up again
// (a job, and on read) until it settles; each move is one conditional UPDATE from the state
// read, so of two concurrent lookups only one moves it and emits the event.

export const LOOKUP_JOB = 'billing.charge.lookup';
const LOOKUP_TIMEOUT_MS = 10_000;

export interface ChargeRow {
  charge_id: string;
  account_id: string;
  amount: number;
  currency: string;
  state: string;
  amount_refunded: number;
  customer_id: string | null;
  payment_method_id: string;
  vendor: string;
  vendor_ref: string;
  next_action_url: string | null;
  failure_code: string | null;
  decline_code: string | null;
  failure_message: string | null;
  created_at: number;
  updated_at: number;
}

/** States a vendor may still move (a lookup, the payer's authentication). */
export const awaitingVendor = (state: string) => state === 'pending' || state === 'requires_action';

export function chargeRow(r: any): ChargeRow {
  return {
    ...r,
    amount: Number(r.amount),
    amount_refunded: Number(r.amount_refunded),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

export function wireCharge(r: ChargeRow): ChargeT {
  return {
    charge_id: r.charge_id,
    amount: r.amount,
    currency: r.currency,
    state: r.state as ChargeT['state'],
    amount_refunded: r.amount_refunded,
    ...(r.customer_id ? { customer_id: r.customer_id } : {}),
    payment_method_id: r.payment_method_id,
    vendor: r.vendor,
    ...(r.state === 'requires_action' && r.next_action_url ? { next_action_url: r.next_action_url } : {}),
    ...(r.failure_code
      ? {
          error: {
            code: r.failure_code,
            message: r.failure_message ?? r.failure_code,
            ...(r.decline_code ? { decline_code: r.decline_code } : {}),
          },
        }
      : {}),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** The columns a vendor's answer sets. */
function outcome(out: ChargeOutput) {
  return {
    state: out.state,
    next_action_url: out.next_action_url ?? null,
    failure_code: out.state === 'failed' ? (out.failure_code ?? 'payment_failed') : null,
    decline_code: out.state === 'failed' ? (out.decline_code ?? null) : null,
    failure_message: out.state === 'failed' ? (out.failure_message ?? null) : null,
  };
}

export class Charges {
  constructor(
    private readonly svc: Svc,
    private readonly cfg: BillingConfigT
  ) {}

  async create(req: FastifyRequest, reply: FastifyReply, body: ChargeBodyT): Promise<ChargeT> {
    const { svc, cfg } = this;
    const p = req.principal!;
    const currency = checkCurrency(body.currency);
    if (body.amount > cfg.max_amount)
      throw fieldError('amount', `is over the largest charge this gateway makes (${cfg.max_amount})`);
    if (!body.payment_method_id)
      throw fieldError(
        'payment_method_id',
        'is required: the gateway charges a payment method saved at the vendor (its client library tokenises cards)'
      );
    svc.router.assertServed('payments.charge', { region: p.region });
    const { charge_id } = await recordAttempt(svc, req, () => ({ charge_id: newId('ch') }));
    const input: ChargeInput = {
      charge_id,
      idempotency_key: charge_id,
      amount: body.amount,
      currency,
      payment_method_id: body.payment_method_id,
      description: `Charge ${charge_id}`,
      return_url: body.return_url ?? `${svc.config.server.public_url}/billing/return/${charge_id}`,
      ...(body.customer_id ? { customer_id: body.customer_id } : {}),
    };
    // charge:false: the money moves at the payments vendor, not in the wallet.
    const res = await svc.router.call<ChargeInput, ChargeOutput>('payments.charge', input, {
      accountId: p.accountId,
      region: p.region,
      charge: false,
      meter: req.meter,
      ref: charge_id,
      idempotencyKey: charge_id,
    });
    const now = Date.now();
    const row: ChargeRow = {
      charge_id,
      account_id: p.accountId,
      amount: body.amount,
      currency,
      amount_refunded: 0,
      customer_id: body.customer_id ?? null,
      payment_method_id: body.payment_method_id,
      vendor: res.vendor,
      vendor_ref: res.output.vendor_ref,
      ...outcome(res.output),
      created_at: now,
      updated_at: now,
    };
    return idempotentTransaction(svc, req, reply, async (trx) => {
      await trx.insertInto('billing_charges').values(row).execute();
      const wire = wireCharge(row);
      await svc.events.emit(trx, { accountId: row.account_id, type: `charge.${row.state}`, data: wire });
      if (awaitingVendor(row.state)) await this.scheduleLookup(trx, charge_id, now);
      return wire;
    });
  }

  private async scheduleLookup(trx: Kysely<any>, chargeId: string, now: number): Promise<void> {
    await this.svc.jobs.enqueue(
      {
        kind: LOOKUP_JOB,
        payload: { charge_id: chargeId },
        runAt: now + this.cfg.lookup_seconds[0] * 1000,
        maxAttempts: this.cfg.lookup_seconds.length,
        uniqueKey: `${LOOKUP_JOB}:${chargeId}`,
      },
      trx
    );
  }

  /** The delay before lookup `attempt + 1` (after the `attempt`-th found the charge still awaiting). */
  lookupDelayMs(attempt: number): number {
    const s = this.cfg.lookup_seconds;
    return s[Math.min(attempt, s.length - 1)] * 1000;
  }

  async find(db: Kysely<any>, chargeId: string, accountId?: string): Promise<ChargeRow | undefined> {
    let q = db.selectFrom('billing_charges').selectAll().where('charge_id', '=', chargeId);
    if (accountId) q = q.where('account_id', '=', accountId);
    const r = await q.executeTakeFirst();
    return r ? chargeRow(r) : undefined;
  }

  async findByVendorRef(
    vendor: string,
    vendorRef: string,
    db: Kysely<any> = this.svc.db
  ): Promise<ChargeRow | undefined> {
    const r = await db
      .selectFrom('billing_charges')
      .selectAll()
      .where('vendor', '=', vendor)
      .where('vendor_ref', '=', vendorRef)
      .executeTakeFirst();
    return r ? chargeRow(r) : undefined;
  }

  async mine(accountId: string, chargeId: string): Promise<ChargeRow> {
    const r = await this.find(this.svc.db, chargeId, accountId);
    if (!r) throw apiError('not_found', `No charge ${chargeId} in this account.`, { param: 'charge_id' });
    return r;
  }

  /** One charge; one still awaiting its vendor is looked up first (its stored state when the vendor cannot say). */
  async get(accountId: string, chargeId: string): Promise<ChargeT> {
    const r = await this.mine(accountId, chargeId);
    if (!awaitingVendor(r.state)) return wireCharge(r);
    try {
      return wireCharge(await this.refresh(r));
    } catch (e) {
      this.svc.log.warn({ err: e, charge_id: chargeId }, 'charge lookup failed; answering the stored state');
      return wireCharge(r);
    }
  }

  async list(accountId: string, q: ChargeListQueryT) {
    let sel = this.svc.db.selectFrom('billing_charges').selectAll().where('account_id', '=', accountId);
    if (q.customer_id) sel = sel.where('customer_id', '=', q.customer_id);
    const rows = (await newestFirst(sel, 'charge_id', q.limit + 1, decodeCursor(q.cursor)).execute()).map(chargeRow);
    return pageOf(rows, q.limit, (r) => ({ t: r.created_at, id: r.charge_id }), wireCharge);
  }

  /** Ask the charge's vendor where it is now and apply the answer. */
  async refresh(r: ChargeRow): Promise<ChargeRow> {
    const res = await this.svc.router.call<ChargeLookupInput, ChargeOutput>(
      'payments.charge.lookup',
      {
        charge_id: r.charge_id,
        vendor_ref: r.vendor_ref,
        payment_method_id: r.payment_method_id,
        created_at: r.created_at,
      },
      { accountId: r.account_id, vendor: r.vendor, charge: false, timeoutMs: LOOKUP_TIMEOUT_MS }
    );
    return (await this.move(r, res.output)) ?? r;
  }

  /**
   * Move a charge awaiting its vendor to what the vendor now says, once: the UPDATE is
   * conditional on the state `r` was read in, and the event commits with it. Returns the charge
   * after the attempt, or undefined when it had moved meanwhile.
   */
  async move(r: ChargeRow, out: ChargeOutput, db: Kysely<any> = this.svc.db): Promise<ChargeRow | undefined> {
    if (out.state === r.state) return r;
    const work = async (trx: Kysely<any>) => {
      const now = Date.now();
      const res = await trx
        .updateTable('billing_charges')
        .set({ ...outcome(out), next_action_url: out.next_action_url ?? r.next_action_url, updated_at: now })
        .where('charge_id', '=', r.charge_id)
        .where('state', '=', r.state)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return this.find(trx, r.charge_id);
      const moved = (await this.find(trx, r.charge_id))!;
      await this.svc.events.emit(trx, {
        accountId: r.account_id,
        type: `charge.${moved.state}`,
        data: wireCharge(moved),
      });
      return moved;
    };
    // Inside a webhook's transaction (with its event id) already, or a transaction of its own.
    return db.isTransaction ? work(db) : db.transaction().execute(work);
  }
}
