import { sql, type Kysely } from 'kysely';
import type { StorageConfig } from './config.js';

export interface Caps {
  tier: string;
  maxObjectBytes: number;
  maxTotalBytes: number | undefined;
}

export interface Usage {
  bytes_stored: number;
  bytes_served: number;
}

/**
 * Storage metering per account: bytes stored (moved by every put and delete) and bytes
 * served. One upsert a change, atomic on SQLite and PostgreSQL. The per-tier caps are read
 * against it before and while an upload streams; uploads racing each other can overshoot
 * the total cap by what they carry between them.
 */
export class UsageMeter {
  /** Served bytes not yet written: a GET must not cost a database write. */
  private readonly pendingServed = new Map<string, number>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Kysely<any>, private readonly config: StorageConfig, private readonly flushMs = 1000) {}

  /** Count bytes served; written within `flushMs` (and before any read of the counters). */
  served(accountId: string, bytes: number): void {
    if (bytes <= 0) return;
    this.pendingServed.set(accountId, (this.pendingServed.get(accountId) ?? 0) + bytes);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush().catch(() => undefined), this.flushMs);
      this.flushTimer.unref();
    }
  }

  async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = [...this.pendingServed];
    this.pendingServed.clear();
    for (const [accountId, served] of batch) await this.add(accountId, { served });
  }

  async get(accountId: string): Promise<Usage> {
    if (this.pendingServed.has(accountId)) await this.flush();
    const r = await this.db.selectFrom('storage_usage').select(['bytes_stored', 'bytes_served']).where('account_id', '=', accountId).executeTakeFirst();
    return { bytes_stored: Number(r?.bytes_stored ?? 0), bytes_served: Number(r?.bytes_served ?? 0) };
  }

  async add(accountId: string, d: { stored?: number; served?: number }): Promise<void> {
    const stored = Math.round(d.stored ?? 0);
    const served = Math.round(d.served ?? 0);
    if (!stored && !served) return;
    await this.db.insertInto('storage_usage')
      .values({ account_id: accountId, bytes_stored: Math.max(0, stored), bytes_served: served, updated_at: Date.now(), served_billed: 0, billed_at: Date.now() })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({
        bytes_stored: sql`case when storage_usage.bytes_stored + ${stored} < 0 then 0 else storage_usage.bytes_stored + ${stored} end`,
        bytes_served: sql`storage_usage.bytes_served + ${served}`,
        updated_at: Date.now(),
      }))
      .execute();
  }

  async caps(accountId: string): Promise<Caps> {
    const a = await this.db.selectFrom('accounts').select('tier').where('account_id', '=', accountId).executeTakeFirst();
    return this.capsOf(a?.tier ?? 'free');
  }

  /** The caps and the bytes stored, in one query: every upload reads both. */
  async limits(accountId: string): Promise<{ caps: Caps; stored: number }> {
    const r = await this.db.selectFrom('accounts').leftJoin('storage_usage', 'storage_usage.account_id', 'accounts.account_id')
      .select(['accounts.tier', 'storage_usage.bytes_stored']).where('accounts.account_id', '=', accountId).executeTakeFirst();
    return { caps: this.capsOf(r?.tier ?? 'free'), stored: Number(r?.bytes_stored ?? 0) };
  }

  private capsOf(tier: string): Caps {
    const c = this.config.tier_caps[tier];
    return c ? { tier, maxObjectBytes: Math.min(c.max_object_bytes, this.config.max_object_bytes), maxTotalBytes: c.max_total_bytes }
      : { tier, maxObjectBytes: this.config.max_object_bytes, maxTotalBytes: undefined };
  }
}
