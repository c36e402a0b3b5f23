import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type Wallet, usdToMicros, chargeMarked } from '../../core/kit/area.js';
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
 * charge moves its "billed" marks with a compare-and-set in the debit's transaction
 * (chargeMarked), so when several nodes run this at once only one charges. Amounts under one
 * micro-USD are not charged yet and keep accumulating. An account that cannot pay is charged again next run.
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
      total += await chargeMarked(this.db, this.wallet, this.log, 'storage charge', {
        table: 'storage_usage',
        row: { account_id: r.account_id },
        marks: { billed_at: Number(r.billed_at), served_billed: Number(r.served_billed) },
        next: { billed_at: now, served_billed: Number(r.bytes_served) },
        accountId: r.account_id,
        micros,
        ref: `storage:${now}`,
        capability: 'storage',
      });
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
