import type { Logger } from 'pino';
import { isApiError, usdToMicros, type Wallet } from '../../core/kit/area.js';

interface Usage {
  messages: number;
  open: number;
  /** When `connMs` last took the open sockets' time in. */
  since: number;
  connMs: number;
  /** Fractions of a micro-USD not charged yet. */
  owed: number;
}

/**
 * Realtime usage of this node, charged to the wallet every interval: messages (each publish
 * and each copy delivered) and connection minutes. Counting happens in memory (a message is
 * too small to write a ledger row for); what is under one micro-USD waits for the next run.
 */
export class RealtimeMeter {
  private readonly usage = new Map<string, Usage>();
  private readonly perMessage: number;
  private readonly perConnMs: number;

  constructor(
    private readonly wallet: Wallet,
    private readonly log: Logger,
    private readonly nodeId: string,
    prices: { perMillionMessagesUsd: number; perMillionConnectionMinutesUsd: number }
  ) {
    this.perMessage = usdToMicros(prices.perMillionMessagesUsd) / 1e6;
    this.perConnMs = usdToMicros(prices.perMillionConnectionMinutesUsd) / 1e6 / 60_000;
  }

  private of(accountId: string, now: number): Usage {
    let u = this.usage.get(accountId);
    if (!u) {
      u = { messages: 0, open: 0, since: now, connMs: 0, owed: 0 };
      this.usage.set(accountId, u);
    }
    return u;
  }

  private settle(u: Usage, now: number): void {
    u.connMs += u.open * (now - u.since);
    u.since = now;
  }

  messages(accountId: string, n: number): void {
    if (n > 0) this.of(accountId, Date.now()).messages += n;
  }

  opened(accountId: string): void {
    const now = Date.now();
    const u = this.of(accountId, now);
    this.settle(u, now);
    u.open++;
  }

  closed(accountId: string): void {
    const now = Date.now();
    const u = this.of(accountId, now);
    this.settle(u, now);
    u.open = Math.max(0, u.open - 1);
  }

  /** Debit what each account owes up to now; returns the micro-USD charged. */
  async flush(now = Date.now()): Promise<number> {
    let total = 0;
    for (const [accountId, u] of this.usage) {
      this.settle(u, now);
      const exact = u.owed + u.messages * this.perMessage + u.connMs * this.perConnMs;
      const micros = Math.floor(exact);
      u.messages = 0;
      u.connMs = 0;
      u.owed = exact - micros;
      if (micros >= 1) {
        try {
          await this.wallet.debit(accountId, micros, 'usage', `realtime:${this.nodeId}:${now}`, undefined, {
            capability: 'realtime',
          });
          total += micros;
        } catch (e) {
          // Kept and charged again next run, as storage does.
          u.owed += micros;
          if (isApiError(e) && e.code === 'insufficient_balance')
            this.log.warn({ account_id: accountId, micros }, 'realtime charge: balance too low; retrying next run');
          else this.log.warn({ err: e, account_id: accountId }, 'realtime charge failed');
        }
      }
      if (u.open === 0 && u.owed < 1e-9) this.usage.delete(accountId);
    }
    return total;
  }
}
