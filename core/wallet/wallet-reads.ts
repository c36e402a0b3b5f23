import type { CompiledQuery, Kysely } from 'kysely';
import { apiError } from '../errors.js';
import { formatUsd } from './money.js';
import type { SyncSqlite } from '../db/open.js';
import { syncBalance } from './sync-wallet.js';
import { MemoryHolds } from './memory-holds.js';
import { ChargeQueue } from './charge-queue.js';
import { BalanceCache } from './balance-cache.js';
import { type Db, take } from './kysely-wallet.js';

// The wallet's state and its reads: the balance (on SQLite's free connection, kept a moment),
// what holds in memory and queued charges keep back, and the conditional take every charge
// ends in. wallet-holds.ts reserves and gives back on top of it, wallet.ts settles and credits.

/**
 * How long a hold taken without a deadline (a chat batch, which refreshes it at every poll)
 * stays held: past it, it belongs to something that died with its process.
 */
export const STALE_HOLD_MS = 30 * 60_000;

/** Margin after a call's deadline before its hold counts as left behind (`wallet.hold_grace_seconds`). */
export const DEFAULT_HOLD_GRACE_MS = 60_000;

/** What a reservation holds until it is settled or released. */
export interface Hold {
  holdId: string;
  accountId: string;
  amount: number;
  capability: string;
}

/** The state every part of the wallet shares (wallet.ts's Wallet is the class to use). */
export class WalletReads {
  /** `sync`: SQLite's connection, for the hot path (sync-wallet.ts) when no transaction holds it. */
  /**
   * `holdGraceMs`: how long after its call's deadline a hold is still the call's to settle
   * (the answer is being read, the settle is on its way); after that releaseExpired gives it back.
   * `memoryHolds`: this process alone writes the SQLite file (owner-lock.ts), so the holds of
   * calls with a deadline are kept in memory (memory-holds.ts), not written, and their charges
   * are written after the response (charge-queue.ts).
   */
  constructor(
    protected readonly db: Kysely<any>,
    protected readonly sync?: SyncSqlite,
    protected readonly holdGraceMs = DEFAULT_HOLD_GRACE_MS,
    memoryHolds = false,
    log?: { error(obj: object, msg: string): void }
  ) {
    if (!memoryHolds || !sync) return;
    this.holds = new MemoryHolds();
    this.queue = new ChargeQueue(
      sync,
      (accountId, micros) => this.cached.spent(accountId, micros),
      (err, n) => log?.error({ err, charges: n }, 'could not write wallet charges: those calls go uncharged')
    );
  }

  protected readonly holds?: MemoryHolds;
  protected readonly queue?: ChargeQueue;

  /**
   * What `accountId`'s holds kept in memory amount to: part of the `balance_micros` column but
   * not of the balance, as a hold written to `wallet_holds` is taken from the column.
   */
  held(accountId: string): number {
    return this.holds ? this.holds.held(accountId) + this.queue!.pending(accountId) : 0;
  }

  protected syncFree(): SyncSqlite | undefined {
    return this.sync?.free() ? this.sync : undefined;
  }

  // The balance read is on every metered response and GET /v1/account/balance: compiled once
  // (the SQL differs by dialect, so Kysely writes it) and then run with each account's id.
  protected balanceQuery?: CompiledQuery;

  /** Balances read on SQLite's free connection, kept a moment (balance-cache.ts). */
  protected readonly cached = new BalanceCache();

  /** Run a write of `accountId`'s balance with its cached balance dropped around it. */
  protected async writing<T>(accountId: string, fn: () => Promise<T> | T): Promise<T> {
    this.cached.forget(accountId);
    try {
      return await fn();
    } finally {
      this.cached.forget(accountId);
    }
  }

  async balance(accountId: string, trx: Db = this.db): Promise<number> {
    this.balanceQuery ??= this.db.selectFrom('wallets').select('balance_micros').where('account_id', '=', '').compile();
    const sync = trx === this.db ? this.syncFree() : undefined;
    if (sync) {
      return this.column(sync, accountId) - this.held(accountId);
    }
    const { rows } = await trx.executeQuery<{ balance_micros: number }>({
      ...this.balanceQuery,
      parameters: [accountId],
    });
    return (rows[0] ? Number(rows[0].balance_micros) : 0) - this.held(accountId);
  }

  /** How many holds of `accountId` are kept in memory (rows in `wallet_holds` are the others). */
  holdsInMemory(accountId: string): number {
    return this.holds?.count(accountId) ?? 0;
  }

  /** The `balance_micros` column on the free SQLite connection, kept a moment (see `cached`). */
  protected column(sync: SyncSqlite, accountId: string): number {
    const hit = this.cached.get(accountId);
    if (hit !== undefined) return hit;
    const micros = syncBalance(sync, accountId);
    this.cached.set(accountId, micros);
    return micros;
  }

  /**
   * Take `micros`, or as much of it as the balance holds; returns what was taken. The balance
   * read and the conditional take are two statements, so a concurrent debit in between makes
   * the take miss: read again rather than record money that was never taken.
   */
  protected async takeUpTo(q: Db, accountId: string, micros: number): Promise<number> {
    for (let round = 0; round < 5; round++) {
      if (await take(q, accountId, micros, this.held(accountId))) return micros;
      const left = Math.min(micros, await this.balance(accountId, q));
      if (left <= 0) return 0;
      if (await take(q, accountId, left, this.held(accountId))) return left;
    }
    return 0;
  }

  protected async insufficient(q: Db, accountId: string, micros: number) {
    const bal = await this.balance(accountId, q);
    return apiError(
      'insufficient_balance',
      `Balance ${formatUsd(bal)} USD is below the ${formatUsd(micros)} USD this call reserves. Top up with POST /v1/account/topup.`,
      { details: { balance_usd: bal / 1e6, required_usd: micros / 1e6 } }
    );
  }
}

/** NaN or Infinity would pass the balance's CHECK as NULL on SQLite: refuse them outright. */
export function assertMicros(micros: number, what: string): void {
  if (typeof micros !== 'number' || !Number.isFinite(micros))
    throw new Error(`wallet ${what}: ${String(micros)} is not an amount of micro-USD`);
}
