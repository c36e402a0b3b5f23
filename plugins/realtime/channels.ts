import type { Kysely, Transaction } from 'kysely';
import { apiError, iso, isUniqueViolation, newestFirst, newId, type Bus, type CursorPos } from '../../core/kit/area.js';
import { typeByPrefix, type ChannelType } from './channel-names.js';
import type { ChannelRecordT } from './schemas.js';

interface Row {
  channel_id: string;
  account_id: string;
  name: string;
  type: ChannelType;
  created_at: number | string;
}

const TOPIC = 'realtime.channels';
const CACHE_MAX = 10_000;

/**
 * Channels an account declared. A subscribe asks each channel's type, so types are kept in
 * memory; a create or delete on any node drops the entry everywhere through the bus.
 */
export class Channels {
  private readonly types = new Map<string, ChannelType>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly db: Kysely<any>,
    private readonly bus: Bus
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(TOPIC, (m) => this.types.delete(String(m)));
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
  }

  /** The declared type, else the one the name implies. */
  async typeOf(accountId: string, name: string): Promise<ChannelType> {
    const key = `${accountId}\u0000${name}`;
    const hit = this.types.get(key);
    if (hit) return hit;
    const r = await this.db
      .selectFrom('realtime_channels')
      .select('type')
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
    const type = (r?.type as ChannelType | undefined) ?? typeByPrefix(name);
    if (this.types.size >= CACHE_MAX) this.types.clear();
    this.types.set(key, type);
    return type;
  }

  async create(trx: Transaction<any>, accountId: string, name: string, type: ChannelType): Promise<ChannelRecordT> {
    const implied = typeByPrefix(name);
    if (implied !== 'public' && implied !== type)
      throw apiError('unprocessable', `A channel named ${name} is a ${implied} channel (its prefix says so).`, {
        param: 'type',
      });
    const row: Row = { channel_id: newId('ch'), account_id: accountId, name, type, created_at: Date.now() };
    try {
      await trx.insertInto('realtime_channels').values(row).execute();
    } catch (e) {
      if (isUniqueViolation(e))
        throw apiError('already_exists', `This account already has a channel named ${name}.`, { param: 'name' });
      throw e;
    }
    return wire(row);
  }

  /** Told after the commit, so no node re-reads the old type from a transaction not yet visible. */
  async changed(accountId: string, name: string): Promise<void> {
    await this.bus.publish(TOPIC, `${accountId}\u0000${name}`);
  }

  async list(accountId: string, limit: number, pos?: CursorPos): Promise<Row[]> {
    const q = this.db.selectFrom('realtime_channels').selectAll().where('account_id', '=', accountId);
    return (await newestFirst(q, 'channel_id', limit, pos).execute()) as Row[];
  }

  async remove(accountId: string, name: string): Promise<void> {
    const r = await this.db
      .deleteFrom('realtime_channels')
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (Number(r.numDeletedRows) !== 1) throw apiError('not_found', `No channel named ${name} was declared.`);
    await this.changed(accountId, name);
  }

  readonly wire = wire;
}

function wire(r: Row): ChannelRecordT {
  return { channel_id: r.channel_id, name: r.name, type: r.type, created_at: iso(Number(r.created_at)) };
}
