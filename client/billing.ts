import { seg, type Requester } from './call.js';
import { paginate } from './paginate.js';
import type {
  Charge,
  ChargeListQuery,
  ChargePage,
  CreateChargeRequest,
  CreateRefundRequest,
  Refund,
  RefundListQuery,
  RefundPage,
} from './billing-types.js';
import type { RequestOptions } from './types.js';

/** `client.billing`: charges and refunds of your end customers (docs/billing.md). */
export class BillingApi {
  constructor(private readonly call: Requester) {}

  /**
   * Charge a saved payment method. A decline is not thrown: the Charge is `failed` with
   * `error.code`. Pass an `idempotencyKey` so a retry after a lost answer never charges twice.
   */
  charge(body: CreateChargeRequest, opts: RequestOptions = {}): Promise<Charge> {
    return this.call('POST', '/v1/billing/charges', { ...opts, body });
  }

  getCharge(chargeId: string, opts: RequestOptions = {}): Promise<Charge> {
    return this.call('GET', `/v1/billing/charges/${seg(chargeId)}`, opts);
  }

  /** One page of the account's charges, newest first; `next_cursor` fetches the next. */
  listCharges(query: ChargeListQuery = {}, opts: RequestOptions = {}): Promise<ChargePage> {
    const { customer_id, limit, cursor } = query;
    return this.call('GET', '/v1/billing/charges', { ...opts, query: { customer_id, limit, cursor } });
  }

  iterateCharges(
    query: Omit<ChargeListQuery, 'cursor'> = {},
    opts: RequestOptions = {}
  ): AsyncIterableIterator<Charge> {
    return paginate((cursor) => this.listCharges({ ...query, cursor }, opts));
  }

  /** Refund all (no `amount`) or part of a charge; above what is left throws `unprocessable`. */
  refund(body: CreateRefundRequest, opts: RequestOptions = {}): Promise<Refund> {
    return this.call('POST', '/v1/billing/refunds', { ...opts, body });
  }

  getRefund(refundId: string, opts: RequestOptions = {}): Promise<Refund> {
    return this.call('GET', `/v1/billing/refunds/${seg(refundId)}`, opts);
  }

  /** One page of the account's refunds, newest first (`charge_id`, `state` narrow it). */
  listRefunds(query: RefundListQuery = {}, opts: RequestOptions = {}): Promise<RefundPage> {
    const { charge_id, state, limit, cursor } = query;
    return this.call('GET', '/v1/billing/refunds', { ...opts, query: { charge_id, state, limit, cursor } });
  }

  iterateRefunds(
    query: Omit<RefundListQuery, 'cursor'> = {},
    opts: RequestOptions = {}
  ): AsyncIterableIterator<Refund> {
    return paginate((cursor) => this.listRefunds({ ...query, cursor }, opts));
  }
}
