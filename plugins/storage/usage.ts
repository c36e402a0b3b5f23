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

/** What the meter knows of an account without asking the database: its tier and bytes stored. */
interface Known {
  caps: Caps;
  /** Bytes stored as last read, plus every change this node recorded since. */
  stored: number;
  until: number;
}

/** How long a tier and a stored-bytes figure read from the database are trusted. */
const KNOWN_MS = 5000;

/**
 * Storage metering per account: bytes stored (moved by every put and delete) and bytes
 * served. Changes are summed in memory and written in batches, at most `flushMs` after they
 * happen (one upsert an account a batch, atomic on SQLite and PostgreSQL), and before any
 * read of the counters; a clean stop writes the last batch. A crash (not a stop) loses at
 * most the last `flushMs` of changes. The per-tier caps are checked against the tier and the
 * bytes stored as read within KNOWN_MS, plus this node's changes since: another node's
 * uploads (and a tier change) are seen within KNOWN_MS, and uploads racing each other can
 * overshoot the total cap by what they carry between them.
 */
export class UsageMeter {
  /** Changes not yet written: a put or a GET must not cost a database write. */
  private readonly pending = new Map<string, { stored: number; served: number }>();
  private readonly known = new Map<string, Known>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<any>,
    private readonly config: StorageConfig,
    private readonly flushMs = 1000
  ) {}

  /** Count bytes served; written within `flushMs` (and before any read of the counters). */
  served(accountId: string, bytes: number): void {
    if (bytes > 0) this.record(accountId, 0, bytes);
  }

  /** Count a change of bytes stored (negative for a delete); written like served bytes. */
  stored(accountId: string, delta: number): void {
    if (delta === 0) return;
    this.record(accountId, delta, 0);
    const k = this.known.get(accountId);
    if (k) k.stored = Math.max(0, k.stored + delta);
  }

  private record(accountId: string, stored: number, served: number): void {
    const p = this.pending.get(accountId);
    if (p) {
      p.stored += stored;
      p.served += served;
    } else {
      this.pending.set(accountId, { stored, served });
    }
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush().catch(() => undefined), this.flushMs);
      this.flushTimer.unref();
    }
  }

  /** Write every pending change (one batch at a time, in order). */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = [...this.pending];
    this.pending.clear();
    const run = this.flushing
      .catch(() => undefined)
      .then(async () => {
        for (let i = 0; i < batch.length; i++) {
          const [accountId, d] = batch[i];
          try {
            await this.add(accountId, d);
          } catch (e) {
            // Not lost: back into the next batch.
            for (const [id, rest] of batch.slice(i)) this.record(id, rest.stored, rest.served);
            throw e;
          }
        }
      });
    this.flushing = run;
    return run;
  }

  async get(accountId: string): Promise<Usage> {
    if (this.pending.has(accountId)) await this.flush();
    else await this.flushing.catch(() => undefined);
    const r = await this.db
      .selectFrom('storage_usage')
      .select(['bytes_stored', 'bytes_served'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return { bytes_stored: Math.max(0, Number(r?.bytes_stored ?? 0)), bytes_served: Number(r?.bytes_served ?? 0) };
  }

  /** Write a change now: one upsert. */
  private async add(accountId: string, d: { stored?: number; served?: number }): Promise<void> {
    const stored = Math.round(d.stored ?? 0);
    const served = Math.round(d.served ?? 0);
    if (!stored && !served) return;
    // The raw sum, never clamped here: with several nodes a delete's decrease can be written
    // before the matching upload's increase (each node flushes on its own), and clamping the
    // first at 0 would lose it. Reads clamp (a sum below 0 is such a moment).
    await this.db
      .insertInto('storage_usage')
      .values({
        account_id: accountId,
        bytes_stored: stored,
        bytes_served: served,
        updated_at: Date.now(),
        served_billed: 0,
        billed_at: Date.now(),
      })
      .onConflict((oc) =>
        oc.column('account_id').doUpdateSet({
          bytes_stored: sql`storage_usage.bytes_stored + ${stored}`,
          bytes_served: sql`storage_usage.bytes_served + ${served}`,
          updated_at: Date.now(),
        })
      )
      .execute();
  }

  async caps(accountId: string): Promise<Caps> {
    const a = await this.db
      .selectFrom('accounts')
      .select('tier')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return this.capsOf(a?.tier ?? 'free');
  }

  /**
   * The caps and the bytes stored: every upload reads both, so they are kept for KNOWN_MS
   * (with this node's changes applied as they happen) and read in one query after that.
   */
  async limits(accountId: string): Promise<{ caps: Caps; stored: number }> {
    const now = Date.now();
    const k = this.known.get(accountId);
    if (k && k.until > now) return k;
    // A batch being written is in the database or not depending on timing: wait for it.
    await this.flushing.catch(() => undefined);
    const r = await this.db
      .selectFrom('accounts')
      .leftJoin('storage_usage', 'storage_usage.account_id', 'accounts.account_id')
      .select(['accounts.tier', 'storage_usage.bytes_stored'])
      .where('accounts.account_id', '=', accountId)
      .executeTakeFirst();
    const fresh = {
      caps: this.capsOf(r?.tier ?? 'free'),
      stored: Math.max(0, Number(r?.bytes_stored ?? 0) + (this.pending.get(accountId)?.stored ?? 0)),
      until: now + KNOWN_MS,
    };
    if (this.known.size >= 10_000) this.known.clear();
    this.known.set(accountId, fresh);
    return fresh;
  }

  private capsOf(tier: string): Caps {
    const c = this.config.tier_caps[tier];
    return c
      ? {
          tier,
          maxObjectBytes: Math.min(c.max_object_bytes, this.config.max_object_bytes),
          maxTotalBytes: c.max_total_bytes,
        }
      : { tier, maxObjectBytes: this.config.max_object_bytes, maxTotalBytes: undefined };
  }
}
