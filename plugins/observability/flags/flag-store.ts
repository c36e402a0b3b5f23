import type { Kysely, Transaction } from 'kysely';
import {
  apiError,
  decodeCursor,
  iso,
  newestFirst,
  newId,
  pageOf,
  type Bus,
  type ListQueryT,
} from '../../../core/kit/area.js';
import type { FlagDefinition } from './evaluate.js';

// Flags in the database, and each account's flags in memory for evaluation. A change commits
// the flag and its audit row together, drops this node's copy at once and tells the other
// nodes through the bus; a load that raced a change is not kept (generations).

export const FLAGS_TOPIC = 'observability.flags';

export type StoredFlag = FlagDefinition & { description: string | null };

export interface FlagRecord extends StoredFlag {
  version: number;
  created_at: string;
  updated_at: string;
}

const wire = (r: any): FlagRecord => ({
  ...(JSON.parse(r.definition) as StoredFlag),
  key: r.key,
  version: Number(r.version),
  created_at: iso(Number(r.created_at)),
  updated_at: iso(Number(r.updated_at)),
});

const auditWire = (r: any) => ({
  audit_id: r.audit_id as string,
  key: r.key as string,
  action: r.action as string,
  version: Number(r.version),
  key_id: r.key_id as string,
  before: r.before ? (JSON.parse(r.before) as FlagRecord) : null,
  after: r.after ? (JSON.parse(r.after) as FlagRecord) : null,
  created_at: iso(Number(r.created_at)),
});

interface Loaded {
  flags: Map<string, FlagRecord>;
}

export class FlagStore {
  private readonly cache = new Map<string, Loaded | Promise<Loaded>>();
  private readonly generation = new Map<string, number>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly db: Kysely<any>,
    private readonly bus: Bus,
    private readonly maxFlags: number
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(FLAGS_TOPIC, (m) => {
      const id = (m as { account_id?: unknown })?.account_id;
      if (typeof id === 'string') this.drop(id);
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
  }

  private drop(accountId: string): void {
    this.generation.set(accountId, (this.generation.get(accountId) ?? 0) + 1);
    this.cache.delete(accountId);
  }

  /** The account's flags, from memory; read from the database once after each change. */
  flags(accountId: string): Loaded | Promise<Loaded> {
    const hit = this.cache.get(accountId);
    if (hit) return hit;
    const gen = this.generation.get(accountId) ?? 0;
    const loading = this.db
      .selectFrom('obs_flags')
      .selectAll()
      .where('account_id', '=', accountId)
      .execute()
      .then((rows) => {
        const loaded = { flags: new Map(rows.map((r: any) => [r.key as string, wire(r)])) };
        if (this.cache.get(accountId) === loading && (this.generation.get(accountId) ?? 0) === gen)
          this.cache.set(accountId, loaded);
        return loaded;
      });
    loading.catch(() => {
      if (this.cache.get(accountId) === loading) this.cache.delete(accountId);
    });
    this.cache.set(accountId, loading);
    return loading;
  }

  private async changed(accountId: string): Promise<void> {
    this.drop(accountId);
    await this.bus.publish(FLAGS_TOPIC, { account_id: accountId });
  }

  private async audit(
    trx: Transaction<any>,
    accountId: string,
    keyId: string,
    action: string,
    before: FlagRecord | null,
    after: FlagRecord | null
  ) {
    await trx
      .insertInto('obs_flag_audit')
      .values({
        audit_id: newId('fla'),
        account_id: accountId,
        key: (after ?? before)!.key,
        action,
        version: (after ?? before)!.version,
        key_id: keyId,
        before: before ? JSON.stringify(before) : null,
        after: after ? JSON.stringify(after) : null,
        created_at: Date.now(),
      })
      .execute();
  }

  private async row(db: Kysely<any>, accountId: string, key: string) {
    return db
      .selectFrom('obs_flags')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
  }

  async get(accountId: string, key: string): Promise<FlagRecord> {
    const r = await this.row(this.db, accountId, key);
    if (!r) throw apiError('not_found', `No flag ${key} in this account.`);
    return wire(r);
  }

  async list(accountId: string, q: ListQueryT) {
    const query = this.db.selectFrom('obs_flags').selectAll().where('account_id', '=', accountId);
    const rows = await newestFirst(query, 'key', q.limit + 1, decodeCursor(q.cursor)).execute();
    return pageOf(rows, q.limit, (r: any) => ({ t: Number(r.created_at), id: r.key }), wire);
  }

  async create(accountId: string, keyId: string, def: StoredFlag): Promise<FlagRecord> {
    const now = Date.now();
    const rec = await this.db.transaction().execute(async (trx) => {
      const n = await trx
        .selectFrom('obs_flags')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      if (Number(n.n) >= this.maxFlags)
        throw apiError('conflict', `The account has ${this.maxFlags} flags, the most it may: delete one first.`);
      const inserted = await trx
        .insertInto('obs_flags')
        .values({
          account_id: accountId,
          key: def.key,
          definition: JSON.stringify(def),
          version: 1,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      if (!inserted) throw apiError('already_exists', `Flag ${def.key} already exists: change it with PUT.`);
      const after = wire({
        key: def.key,
        definition: JSON.stringify(def),
        version: 1,
        created_at: now,
        updated_at: now,
      });
      await this.audit(trx, accountId, keyId, 'created', null, after);
      return after;
    });
    await this.changed(accountId);
    return rec;
  }

  async update(accountId: string, keyId: string, def: StoredFlag, version: number): Promise<FlagRecord> {
    const now = Date.now();
    const rec = await this.db.transaction().execute(async (trx) => {
      const cur = await this.row(trx, accountId, def.key);
      if (!cur) throw apiError('not_found', `No flag ${def.key} in this account.`);
      // The version in the WHERE makes a concurrent update that read the same version lose here.
      const r = await trx
        .updateTable('obs_flags')
        .set({ definition: JSON.stringify(def), version: version + 1, updated_at: now })
        .where('account_id', '=', accountId)
        .where('key', '=', def.key)
        .where('version', '=', version)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1)
        throw apiError('conflict', `Flag ${def.key} is at version ${cur.version}, not ${version}: read it again.`, {
          details: { current_version: Number(cur.version) },
        });
      const after = wire({ ...cur, definition: JSON.stringify(def), version: version + 1, updated_at: now });
      await this.audit(trx, accountId, keyId, 'updated', wire(cur), after);
      return after;
    });
    await this.changed(accountId);
    return rec;
  }

  async delete(accountId: string, keyId: string, key: string, version?: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const cur = await this.row(trx, accountId, key);
      if (!cur) throw apiError('not_found', `No flag ${key} in this account.`);
      let q = trx.deleteFrom('obs_flags').where('account_id', '=', accountId).where('key', '=', key);
      if (version !== undefined) q = q.where('version', '=', version);
      const r = await q.executeTakeFirst();
      if (Number(r.numDeletedRows) !== 1)
        throw apiError('conflict', `Flag ${key} is at version ${cur.version}, not ${version}: read it again.`, {
          details: { current_version: Number(cur.version) },
        });
      await this.audit(trx, accountId, keyId, 'deleted', wire(cur), null);
    });
    await this.changed(accountId);
  }

  async auditOf(accountId: string, key: string, q: ListQueryT) {
    const query = this.db
      .selectFrom('obs_flag_audit')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('key', '=', key);
    const rows = await newestFirst(query, 'audit_id', q.limit + 1, decodeCursor(q.cursor)).execute();
    return pageOf(rows, q.limit, (r: any) => ({ t: Number(r.created_at), id: r.audit_id }), auditWire);
  }

  async sweepAudit(before: number, limit: number): Promise<number> {
    const old = this.db.selectFrom('obs_flag_audit').select('audit_id').where('created_at', '<', before).limit(limit);
    const r = await this.db.deleteFrom('obs_flag_audit').where('audit_id', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
