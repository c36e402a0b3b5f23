import type { Kysely } from 'kysely';

export interface Member {
  client_id: string;
  user_id?: string;
  /** Pusher's `user_info` from the channel data. */
  user_info?: unknown;
}

interface Row {
  account_id: string;
  channel: string;
  client_id: string;
  user_id: string | null;
  user_info: string | null;
}

/**
 * Presence members in the database, one row a socket and channel, each stamped by its node.
 * Every node refreshes its own rows; rows no node refreshed within the timeout belong to a node
 * that died, and whichever node sweeps first removes them and announces the leaves.
 */
export class Presence {
  constructor(
    private readonly db: Kysely<any>,
    private readonly nodeId: string,
    private readonly timeoutMs: number
  ) {}

  async join(accountId: string, channel: string, m: Member): Promise<void> {
    const row = {
      account_id: accountId,
      channel,
      client_id: m.client_id,
      user_id: m.user_id ?? null,
      user_info: m.user_info === undefined ? null : JSON.stringify(m.user_info),
      node_id: this.nodeId,
      seen_at: Date.now(),
    };
    await this.db
      .insertInto('realtime_presence')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['account_id', 'channel', 'client_id']).doUpdateSet({
          user_id: row.user_id,
          user_info: row.user_info,
          node_id: row.node_id,
          seen_at: row.seen_at,
        })
      )
      .execute();
  }

  /** True when the member was there (so its leave is news). */
  async leave(accountId: string, channel: string, clientId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('realtime_presence')
      .where('account_id', '=', accountId)
      .where('channel', '=', channel)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async members(accountId: string, channel: string): Promise<Member[]> {
    const rows = (await this.db
      .selectFrom('realtime_presence')
      .select(['account_id', 'channel', 'client_id', 'user_id', 'user_info'])
      .where('account_id', '=', accountId)
      .where('channel', '=', channel)
      .where('seen_at', '>=', Date.now() - this.timeoutMs)
      .orderBy('client_id')
      .limit(10_000)
      .execute()) as Row[];
    return rows.map(member);
  }

  /** This node is alive: its rows are fresh again. */
  async heartbeat(): Promise<void> {
    await this.db
      .updateTable('realtime_presence')
      .set({ seen_at: Date.now() })
      .where('node_id', '=', this.nodeId)
      .execute();
  }

  /** The stale rows of dead nodes, removed; each one returned once, to the node that removed it. */
  async sweep(): Promise<Array<{ accountId: string; channel: string; member: Member }>> {
    const stale = (await this.db
      .selectFrom('realtime_presence')
      .select(['account_id', 'channel', 'client_id', 'user_id', 'user_info'])
      .where('seen_at', '<', Date.now() - this.timeoutMs)
      .limit(1000)
      .execute()) as Row[];
    const gone = [];
    for (const r of stale) {
      if (await this.leave(r.account_id, r.channel, r.client_id))
        gone.push({ accountId: r.account_id, channel: r.channel, member: member(r) });
    }
    return gone;
  }

  /** On a clean stop: this node's members leave now rather than after the timeout. */
  async removeNode(): Promise<Array<{ accountId: string; channel: string; member: Member }>> {
    const rows = (await this.db
      .selectFrom('realtime_presence')
      .select(['account_id', 'channel', 'client_id', 'user_id', 'user_info'])
      .where('node_id', '=', this.nodeId)
      .execute()) as Row[];
    await this.db.deleteFrom('realtime_presence').where('node_id', '=', this.nodeId).execute();
    return rows.map((r) => ({ accountId: r.account_id, channel: r.channel, member: member(r) }));
  }
}

function member(r: Row): Member {
  const m: Member = { client_id: r.client_id };
  if (r.user_id !== null) m.user_id = r.user_id;
  if (r.user_info !== null) m.user_info = JSON.parse(r.user_info);
  return m;
}
