import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type Wallet, usdToMicros, isApiError } from '../../core/kit/area.js';
import type { StorageConfig } from './config.js';
import type { UsageMeter } from './usage.js';

const GIB = 1024 ** 3;
const MONTH_MS = 30 * 86_400_000;

/**
 * The discovery line of a storage price, as configured (the wallet's markup is for vendor
 * prices; storage charges exactly these): per GiB-month stored, or per GiB served. None when 0.
 */
export function storagePrice(
  config: StorageConfig,
  what: 'stored' | 'served'
): { unit: string; price_usd: number } | undefined {
  const price_usd = what === 'stored' ? config.price_per_gib_month_usd : config.price_per_gib_served_usd;
  if (price_usd <= 0) return undefined;
  return { unit: what === 'stored' ? 'gib_month' : 'gib_served', price_usd };
}

/**
 * Charges storage to the wallet from the usage counters: bytes served since the last charge,
 * and bytes stored for the time since then (pro rata of the monthly price). Each account's
 * charge is one transaction that first moves its "billed" marks with a compare-and-set, so
 * when several nodes run this at once only one charges. Amounts under one micro-USD are not
 * charged yet and keep accumulating. An account that cannot pay is charged again next run.
 */
export class StorageBilling {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<any>,
    private readonly wallet: Wallet,
    private readonly config: StorageConfig,
    private readonly log: Logger,
    private readonly usage?: UsageMeter
  ) {}

  get priced(): boolean {
    return this.config.price_per_gib_month_usd > 0 || this.config.price_per_gib_served_usd > 0;
  }

  /** Charge every account what it owes up to `now`; returns the micro-USD charged. */
  async run(now = Date.now()): Promise<number> {
    if (!this.priced) return 0;
    await this.usage?.flush();
    const perServedByte = usdToMicros(this.config.price_per_gib_served_usd) / GIB;
    const perStoredByteMs = usdToMicros(this.config.price_per_gib_month_usd) / GIB / MONTH_MS;
    const rows = await this.db
      .selectFrom('storage_usage')
      .select(['account_id', 'bytes_stored', 'bytes_served', 'served_billed', 'billed_at'])
      .execute();
    let total = 0;
    for (const r of rows) {
      const served = Number(r.bytes_served) - Number(r.served_billed);
      const elapsed = Math.max(0, now - Number(r.billed_at));
      const micros = Math.floor(
        served * perServedByte + Math.max(0, Number(r.bytes_stored)) * elapsed * perStoredByteMs
      );
      if (micros < 1) continue;
      try {
        const charged = await this.db.transaction().execute(async (trx) => {
          const moved = await trx
            .updateTable('storage_usage')
            .set({ served_billed: Number(r.bytes_served), billed_at: now })
            .where('account_id', '=', r.account_id)
            .where('billed_at', '=', Number(r.billed_at))
            .where('served_billed', '=', Number(r.served_billed))
            .executeTakeFirst();
          if (Number(moved.numUpdatedRows) !== 1) return 0; // another node charged it
          await this.wallet.debit(r.account_id, micros, 'usage', `storage:${now}`, trx, { capability: 'storage' });
          return micros;
        });
        total += charged;
      } catch (e) {
        if (isApiError(e) && e.code === 'insufficient_balance')
          this.log.warn({ account_id: r.account_id, micros }, 'storage charge: balance too low; retrying next run');
        else throw e;
      }
    }
    return total;
  }

  start(): void {
    if (!this.priced || this.timer) return;
    this.timer = setInterval(
      () => void this.run().catch((e) => this.log.warn({ err: e }, 'storage billing failed')),
      this.config.billing_interval_seconds * 1000
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
