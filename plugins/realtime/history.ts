import type { Kysely, Transaction } from 'kysely';

export interface StoredMessage {
  message_id: string;
  event: string;
  data: unknown;
  created_at: number;
}

/**
 * The short history of each channel, in the database so a client resuming on another node
 * finds what was published on any node. Only the window is kept: the sweep removes the rest.
 */
export class History {
  constructor(
    readonly db: Kysely<any>,
    private readonly windowMs: number,
    private readonly maxMessages: number
  ) {}

  get enabled(): boolean {
    return this.windowMs > 0 && this.maxMessages > 0;
  }

  async add(q: Kysely<any> | Transaction<any>, accountId: string, channel: string, m: StoredMessage): Promise<void> {
    if (!this.enabled) return;
    await q
      .insertInto('realtime_messages')
      .values({
        message_id: m.message_id,
        account_id: accountId,
        channel,
        event: m.event,
        data: JSON.stringify(m.data),
        created_at: m.created_at,
      })
      .execute();
  }

  /**
   * The messages after `since`, oldest first, and whether they are all of them: false when
   * `since` is no longer in the window or more than `maxMessages` followed it.
   */
  async after(
    accountId: string,
    channel: string,
    since: string
  ): Promise<{ messages: StoredMessage[]; complete: boolean }> {
    const from = Date.now() - this.windowMs;
    const anchor = await this.db
      .selectFrom('realtime_messages')
      .select('created_at')
      .where('message_id', '=', since)
      .where('account_id', '=', accountId)
      .where('channel', '=', channel)
      .executeTakeFirst();
    let q = this.db
      .selectFrom('realtime_messages')
      .select(['message_id', 'event', 'data', 'created_at'])
      .where('account_id', '=', accountId)
      .where('channel', '=', channel)
      .where('created_at', '>=', from);
    if (anchor) {
      const t = Number(anchor.created_at);
      q = q.where((eb) =>
        eb.or([eb('created_at', '>', t), eb.and([eb('created_at', '=', t), eb('message_id', '>', since)])])
      );
    }
    // The newest maxMessages + 1 after the anchor: one more than fits says some were lost.
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('message_id', 'desc')
      .limit(this.maxMessages + 1)
      .execute();
    const complete = !!anchor && Number(anchor.created_at) >= from && rows.length <= this.maxMessages;
    return {
      complete,
      messages: rows
        .slice(0, this.maxMessages)
        .reverse()
        .map((r) => ({
          message_id: r.message_id,
          event: r.event,
          data: JSON.parse(r.data),
          created_at: Number(r.created_at),
        })),
    };
  }

  async forget(accountId: string, channel: string): Promise<void> {
    await this.db
      .deleteFrom('realtime_messages')
      .where('account_id', '=', accountId)
      .where('channel', '=', channel)
      .execute();
  }

  /** Removes what fell out of the window; returns how many rows went. */
  async sweep(now = Date.now()): Promise<number> {
    const r = await this.db
      .deleteFrom('realtime_messages')
      .where('created_at', '<', now - this.windowMs)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
