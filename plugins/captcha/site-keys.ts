import type { Kysely, Transaction } from 'kysely';
import { apiError, deriveKey, newId, newestFirst, open, seal, type CursorPos } from '../../core/kit/area.js';
import type { SiteKeyCreateT, SiteKeyUpdateT, ThirdParty } from './schemas.js';

/** A site key as stored, its vendor secrets still sealed. */
export interface SiteKeyRow {
  site_key_id: string;
  account_id: string;
  label: string;
  allowed_hostnames: string[];
  difficulty: number;
  expected_action: string | null;
  min_score: number | null;
  vendors: Partial<Record<ThirdParty, { site_key: string; secret: string }>>;
  created_at: number;
  updated_at: number;
}

function row(r: any): SiteKeyRow {
  return {
    ...r,
    allowed_hostnames: JSON.parse(r.allowed_hostnames),
    vendors: JSON.parse(r.vendors),
    difficulty: Number(r.difficulty),
    min_score: r.min_score === null ? null : Number(r.min_score),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

const notFound = (id: string) => apiError('not_found', `No captcha site key ${id}.`, { param: 'site_key_id' });

/** Site keys per account; their vendor secrets sealed (AES-GCM, bound to the key and its account). */
export class SiteKeyStore {
  private readonly key: Buffer;

  constructor(
    private readonly db: Kysely<any>,
    master: Buffer,
    private readonly defaultDifficulty: number
  ) {
    this.key = deriveKey(master, 'svc-gateway captcha salt v1', 'captcha vendor secrets v1');
  }

  private sealVendors(id: string, accountId: string, current: SiteKeyRow['vendors'], given: SiteKeyUpdateT['vendors']) {
    const out = { ...current };
    for (const [vendor, v] of Object.entries(given ?? {}) as [ThirdParty, { site_key: string; secret: string }][]) {
      if (v === null) delete out[vendor];
      else if (v)
        out[vendor] = { site_key: v.site_key, secret: seal(this.key, v.secret, `${id}|${accountId}|${vendor}`) };
    }
    return out;
  }

  /** The clear secret of one vendor, in memory for one call; undefined when the key holds none. */
  secret(k: SiteKeyRow, vendor: string): string | undefined {
    const v = k.vendors[vendor as ThirdParty];
    return v ? open(this.key, v.secret, `${k.site_key_id}|${k.account_id}|${vendor}`) : undefined;
  }

  async create(accountId: string, b: SiteKeyCreateT, trx?: Transaction<any>): Promise<SiteKeyRow> {
    const id = newId('csk');
    const now = Date.now();
    const r: SiteKeyRow = {
      site_key_id: id,
      account_id: accountId,
      label: b.label ?? 'site key',
      allowed_hostnames: (b.allowed_hostnames ?? []).map((h) => h.toLowerCase()),
      difficulty: b.difficulty ?? this.defaultDifficulty,
      expected_action: b.expected_action ?? null,
      min_score: b.min_score ?? null,
      vendors: this.sealVendors(id, accountId, {}, b.vendors),
      created_at: now,
      updated_at: now,
    };
    await (trx ?? this.db)
      .insertInto('captcha_site_keys')
      .values({ ...r, allowed_hostnames: JSON.stringify(r.allowed_hostnames), vendors: JSON.stringify(r.vendors) })
      .execute();
    return r;
  }

  /** The key, only to its own account: another account's is not found. */
  async get(accountId: string, id: string): Promise<SiteKeyRow> {
    const r = await this.db
      .selectFrom('captcha_site_keys')
      .selectAll()
      .where('site_key_id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!r) throw notFound(id);
    return row(r);
  }

  /** The key by its public id alone (the challenge endpoint, called by a browser with no project key). */
  async byPublicId(id: string): Promise<SiteKeyRow> {
    const r = await this.db
      .selectFrom('captcha_site_keys')
      .selectAll()
      .where('site_key_id', '=', id)
      .executeTakeFirst();
    if (!r) throw notFound(id);
    return row(r);
  }

  /** The account's first key, made on first use: a widget asked for with no site key gets it. */
  async first(accountId: string): Promise<SiteKeyRow> {
    const r = await this.db
      .selectFrom('captcha_site_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'asc')
      .orderBy('site_key_id', 'asc')
      .limit(1)
      .executeTakeFirst();
    return r ? row(r) : this.create(accountId, { label: 'default' });
  }

  async list(accountId: string, limit: number, after?: CursorPos): Promise<SiteKeyRow[]> {
    const q = this.db.selectFrom('captcha_site_keys').selectAll().where('account_id', '=', accountId);
    return (await newestFirst(q, 'site_key_id', limit, after).execute()).map(row);
  }

  async update(accountId: string, id: string, b: SiteKeyUpdateT): Promise<SiteKeyRow> {
    const cur = await this.get(accountId, id);
    const next: SiteKeyRow = {
      ...cur,
      label: b.label ?? cur.label,
      allowed_hostnames: b.allowed_hostnames?.map((h) => h.toLowerCase()) ?? cur.allowed_hostnames,
      difficulty: b.difficulty ?? cur.difficulty,
      expected_action: b.expected_action === undefined ? cur.expected_action : b.expected_action,
      min_score: b.min_score === undefined ? cur.min_score : b.min_score,
      vendors: this.sealVendors(id, accountId, cur.vendors, b.vendors),
      updated_at: Date.now(),
    };
    await this.db
      .updateTable('captcha_site_keys')
      .set({
        label: next.label,
        allowed_hostnames: JSON.stringify(next.allowed_hostnames),
        difficulty: next.difficulty,
        expected_action: next.expected_action,
        min_score: next.min_score,
        vendors: JSON.stringify(next.vendors),
        updated_at: next.updated_at,
      })
      .where('site_key_id', '=', id)
      .where('account_id', '=', accountId)
      .execute();
    return next;
  }

  async remove(accountId: string, id: string): Promise<void> {
    const r = await this.db
      .deleteFrom('captcha_site_keys')
      .where('site_key_id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!Number(r.numDeletedRows)) throw notFound(id);
  }
}
