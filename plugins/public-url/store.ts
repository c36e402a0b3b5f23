import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import {
  apiError,
  base62,
  decodeCursor,
  iso,
  newestFirst,
  newId,
  pageOf,
  type ListQueryT,
} from '../../core/kit/area.js';
import type { PublicUrlConfigT } from './config.js';
import type { PublicUrlRecordT, PublicUrlState } from './schemas.js';
import { isUniqueViolation, randomSubdomain, reservedSubdomain } from './subdomain.js';

export interface UrlRow {
  url_id: string;
  account_id: string | null;
  subdomain: string;
  live_subdomain: string | null;
  state: PublicUrlState;
  port: number | null;
  token_hash: string | null;
  client_ip: string | null;
  bytes_in: number | string;
  bytes_out: number | string;
  bytes_billed: number | string;
  expires_at: number | string;
  created_at: number | string;
  updated_at: number | string;
  /** The node the client is connected to, as other nodes reach it (set while connected). */
  node_url?: string | null;
}

type Db = Kysely<any> | Transaction<any>;

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface CreateInput {
  accountId: string | null;
  subdomain?: string;
  port?: number;
  ttlSeconds: number;
  clientIp?: string;
}

/**
 * Public URL records. A subdomain is reserved by one live record at a time (`live_subdomain`,
 * unique); the account that holds it gets the same record back, renewed, when it asks again,
 * so a restarted tunnel client keeps its URL.
 */
export class UrlStore {
  constructor(
    private readonly db: Kysely<any>,
    private readonly cfg: PublicUrlConfigT,
    private readonly publicUrl: string
  ) {}

  get apiHost(): string {
    return new URL(this.publicUrl).hostname;
  }

  urlOf(subdomain: string): string {
    if (this.cfg.url_template) return this.cfg.url_template.replaceAll('{subdomain}', subdomain);
    const base = new URL(this.publicUrl);
    return `${base.protocol}//${subdomain}.${this.cfg.tunnel_domain}${base.port ? `:${base.port}` : ''}`;
  }

  wire(r: UrlRow, now = Date.now()): PublicUrlRecordT {
    const base = this.publicUrl.replace(/^http/, 'ws').replace(/\/+$/, '');
    return {
      url_id: r.url_id,
      url: this.urlOf(r.subdomain),
      subdomain: r.subdomain,
      state: Number(r.expires_at) <= now ? 'expired' : r.state,
      port: r.port == null ? null : Number(r.port),
      anonymous: r.account_id == null,
      connect_url: `${base}/v1/public-url/tunnel/${r.url_id}`,
      bytes_in: Number(r.bytes_in),
      bytes_out: Number(r.bytes_out),
      expires_at: iso(Number(r.expires_at)),
      created_at: iso(Number(r.created_at)),
    };
  }

  async byId(urlId: string, db: Db = this.db): Promise<UrlRow | undefined> {
    return (await db.selectFrom('public_urls').selectAll().where('url_id', '=', urlId).executeTakeFirst()) as
      | UrlRow
      | undefined;
  }

  /** The account's record, or 404 for an unknown one and for another account's. */
  async get(accountId: string, urlId: string, db: Db = this.db): Promise<UrlRow> {
    const r = await this.byId(urlId, db);
    if (!r || r.account_id !== accountId) throw apiError('not_found', `No public URL ${urlId} in this account.`);
    return r;
  }

  /** The live record serving `subdomain`, if any. */
  async bySubdomain(subdomain: string, now = Date.now()): Promise<UrlRow | undefined> {
    const r = (await this.db
      .selectFrom('public_urls')
      .selectAll()
      .where('live_subdomain', '=', subdomain)
      .executeTakeFirst()) as UrlRow | undefined;
    return r && Number(r.expires_at) > now ? r : undefined;
  }

  async list(accountId: string, q: ListQueryT) {
    const query = this.db.selectFrom('public_urls').selectAll().where('account_id', '=', accountId);
    const rows = (await newestFirst(query, 'url_id', q.limit + 1, decodeCursor(q.cursor)).execute()) as UrlRow[];
    const now = Date.now();
    return pageOf(
      rows,
      q.limit,
      (r) => ({ t: Number(r.created_at), id: r.url_id }),
      (r) => this.wire(r, now)
    );
  }

  /** A new record, or the caller's live record of that subdomain renewed; 409 when another holds it. */
  async create(trx: Transaction<any>, input: CreateInput): Promise<{ row: UrlRow; token?: string }> {
    const now = Date.now();
    const expiresAt = now + input.ttlSeconds * 1000;
    if (input.subdomain !== undefined) {
      if (reservedSubdomain(input.subdomain, this.apiHost, this.cfg.tunnel_domain))
        throw apiError('already_exists', `The subdomain "${input.subdomain}" is reserved.`, { param: 'subdomain' });
      await this.release(trx, input.subdomain, now);
      const held = (await trx
        .selectFrom('public_urls')
        .selectAll()
        .where('live_subdomain', '=', input.subdomain)
        .executeTakeFirst()) as UrlRow | undefined;
      if (held) {
        if (input.accountId === null || held.account_id !== input.accountId)
          throw apiError('already_exists', `The subdomain "${input.subdomain}" is taken.`, { param: 'subdomain' });
        const renewed = { expires_at: expiresAt, port: input.port ?? held.port, updated_at: now };
        await trx.updateTable('public_urls').set(renewed).where('url_id', '=', held.url_id).execute();
        return { row: { ...held, ...renewed } };
      }
    }
    const token = input.accountId === null ? `tun_${base62(40)}` : undefined;
    const row: UrlRow = {
      url_id: newId('url'),
      account_id: input.accountId,
      subdomain: input.subdomain ?? randomSubdomain(),
      live_subdomain: null,
      state: 'waiting',
      port: input.port ?? null,
      token_hash: token ? hashToken(token) : null,
      client_ip: input.clientIp ?? null,
      bytes_in: 0,
      bytes_out: 0,
      bytes_billed: 0,
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
    };
    row.live_subdomain = row.subdomain;
    try {
      await trx.insertInto('public_urls').values(row).execute();
    } catch (e) {
      // Two creates of one name at once: the unique index keeps the first.
      if (isUniqueViolation(e))
        throw apiError('already_exists', `The subdomain "${row.subdomain}" is taken.`, { param: 'subdomain' });
      throw e;
    }
    return { row, token };
  }

  /** Expired records let their subdomain go. */
  private async release(trx: Db, subdomain: string, now: number): Promise<void> {
    await trx
      .updateTable('public_urls')
      .set({ live_subdomain: null, state: 'expired' })
      .where('live_subdomain', '=', subdomain)
      .where('expires_at', '<=', now)
      .execute();
  }

  /** An anonymous record moves into the caller's account; its own account's is 409, another's 404. */
  async claim(accountId: string, urlId: string, trx: Transaction<any>): Promise<UrlRow> {
    const r = await this.byId(urlId, trx);
    if (!r || (r.account_id !== null && r.account_id !== accountId))
      throw apiError('not_found', `No public URL ${urlId} to claim.`);
    if (r.account_id === accountId)
      throw apiError('invalid_state', `Public URL ${urlId} already belongs to this account.`);
    if (Number(r.expires_at) <= Date.now()) throw apiError('invalid_state', `Public URL ${urlId} has expired.`);
    const moved = await trx
      .updateTable('public_urls')
      .set({ account_id: accountId, updated_at: Date.now() })
      .where('url_id', '=', urlId)
      .where('account_id', 'is', null)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) throw apiError('not_found', `No public URL ${urlId} to claim.`);
    return { ...r, account_id: accountId };
  }

  /**
   * `connected` records the node that holds the client (`nodeUrl`); any other state is written
   * only while the record still names `nodeUrl`, so a node that lost the client to another one
   * does not undo the newer connection.
   */
  async setState(urlId: string, state: PublicUrlState, nodeUrl: string): Promise<void> {
    const connected = state === 'connected';
    let q = this.db
      .updateTable('public_urls')
      .set({ state, node_url: connected ? nodeUrl : null, updated_at: Date.now() })
      .where('url_id', '=', urlId)
      .where('state', '!=', 'expired');
    if (!connected) q = q.where((eb) => eb.or([eb('node_url', '=', nodeUrl), eb('node_url', 'is', null)]));
    await q.execute();
  }

  /** Tunnels of `accountId` connected now (on any node), `except` one. */
  async connectedCount(accountId: string, except: string): Promise<number> {
    const r = await this.db
      .selectFrom('public_urls')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId)
      .where('state', '=', 'connected')
      .where('expires_at', '>', Date.now())
      .where('url_id', '!=', except)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Anonymous records made from `ip` in the last hour. */
  async anonymousSince(ip: string, since: number): Promise<number> {
    const r = await this.db
      .selectFrom('public_urls')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('client_ip', '=', ip)
      .where('account_id', 'is', null)
      .where('created_at', '>', since)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async addBytes(urlId: string, bytesIn: number, bytesOut: number): Promise<void> {
    await this.db
      .updateTable('public_urls')
      .set((eb) => ({
        bytes_in: eb('bytes_in', '+', bytesIn),
        bytes_out: eb('bytes_out', '+', bytesOut),
      }))
      .where('url_id', '=', urlId)
      .execute();
  }
}
