import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { deriveKey, isUniqueViolation, open, seal } from '../../core/kit/area.js';

export interface PusherAppRow {
  accountId: string;
  appId: string;
  key: string;
  secret: string;
  tier: string;
  /** A suspended account's sockets are refused. */
  active: boolean;
  createdAt: number;
}

const CACHE_MS = 60_000;

/**
 * Each account's Pusher app: an id (REST paths), a key (socket paths, signatures' prefix) and a
 * secret sealed at rest. Sockets and REST calls find the app by key or id; the answers, with the
 * account's tier, are kept a minute so a reconnect storm does not read the database per socket.
 */
export class PusherApps {
  private readonly sealKey: Buffer;
  private readonly cache = new Map<string, { app: PusherAppRow | null; until: number }>();

  constructor(
    private readonly db: Kysely<any>,
    masterKey: Buffer
  ) {
    this.sealKey = deriveKey(masterKey, 'realtime', 'pusher app secret');
  }

  /** The account's app, made on the first call. */
  async ensure(accountId: string): Promise<PusherAppRow> {
    const found = await this.find('account_id', accountId);
    if (found) return found;
    const secret = randomBytes(20).toString('hex');
    const row = {
      account_id: accountId,
      app_id: String(100000 + (randomBytes(4).readUInt32BE() % 900_000_000)),
      app_key: randomBytes(10).toString('hex'),
      secret_sealed: seal(this.sealKey, secret, accountId),
      created_at: Date.now(),
    };
    try {
      await this.db.insertInto('realtime_apps').values(row).execute();
    } catch (e) {
      // Two first calls at once: the other one's app is the account's.
      if (!isUniqueViolation(e)) throw e;
    }
    const made = await this.find('account_id', accountId);
    if (!made) throw new Error('the Pusher app was not stored');
    return made;
  }

  byKey(key: string): Promise<PusherAppRow | null> {
    return this.cached(`k:${key}`, () => this.find('app_key', key));
  }

  byId(appId: string): Promise<PusherAppRow | null> {
    return this.cached(`i:${appId}`, () => this.find('app_id', appId));
  }

  private async cached(id: string, load: () => Promise<PusherAppRow | null>): Promise<PusherAppRow | null> {
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit && hit.until > now) return hit.app;
    const app = await load();
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(id, { app, until: now + CACHE_MS });
    return app;
  }

  private async find(column: 'account_id' | 'app_key' | 'app_id', value: string): Promise<PusherAppRow | null> {
    const r = await this.db
      .selectFrom('realtime_apps')
      .leftJoin('accounts', 'accounts.account_id', 'realtime_apps.account_id')
      .select([
        'realtime_apps.account_id',
        'realtime_apps.app_id',
        'realtime_apps.app_key',
        'realtime_apps.secret_sealed',
        'realtime_apps.created_at',
        'accounts.tier',
        'accounts.status',
      ])
      .where(`realtime_apps.${column}`, '=', value)
      .executeTakeFirst();
    if (!r) return null;
    return {
      accountId: r.account_id,
      appId: r.app_id,
      key: r.app_key,
      secret: open(this.sealKey, r.secret_sealed, r.account_id),
      tier: r.tier ?? 'free',
      active: r.status === 'active',
      createdAt: Number(r.created_at),
    };
  }
}
