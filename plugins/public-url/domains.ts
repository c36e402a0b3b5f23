import { Resolver } from 'node:dns/promises';
import { domainToASCII } from 'node:url';
import type { Kysely, Transaction } from 'kysely';
import { apiError, base62, decodeCursor, fieldError, iso, newestFirst, newId, pageOf } from '../../core/kit/area.js';
import type { ListQueryT } from '../../core/kit/area.js';
import type { PublicUrlConfigT } from './config.js';
import type { DomainRecordT } from './schemas.js';
import type { UrlStore } from './store.js';
import { isUniqueViolation } from './subdomain.js';

interface DomainRow {
  domain_id: string;
  account_id: string;
  domain: string;
  verified_domain: string | null;
  url_id: string | null;
  state: 'pending' | 'verified' | 'failed';
  challenge: string;
  created_at: number | string;
  checked_at: number | string | null;
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The name in ASCII, lower case, or undefined when it is not a host name of two labels or more. */
export function hostDomain(raw: string): string | undefined {
  const ascii = domainToASCII(raw.trim().replace(/\.$/, ''));
  if (!ascii || ascii.length > 253) return undefined;
  const labels = ascii.toLowerCase().split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^[0-9]+$/.test(labels.at(-1)!)) return undefined;
  return labels.join('.');
}

/**
 * Custom domains for tunnels: a TXT record `_svc-challenge.<domain>` proves control, then the
 * domain's requests go to the bound tunnel (a CNAME to its {subdomain}.{tunnel_domain} gets
 * them to the gateway). A domain routes for one account only: `verified_domain` is unique.
 */
export class DomainStore {
  /** Verified domain -> url_id, for the Host router (sync): loaded at start, kept on verify. */
  readonly routes = new Map<string, string>();

  constructor(
    private readonly db: Kysely<any>,
    private readonly cfg: PublicUrlConfigT,
    private readonly urls: UrlStore
  ) {}

  async load(): Promise<void> {
    const rows = await this.db
      .selectFrom('public_url_domains')
      .select(['verified_domain', 'url_id'])
      .where('verified_domain', 'is not', null)
      .where('url_id', 'is not', null)
      .execute();
    this.routes.clear();
    for (const r of rows) this.routes.set(r.verified_domain as string, r.url_id as string);
  }

  private async wire(r: DomainRow, db: Kysely<any> | Transaction<any> = this.db): Promise<DomainRecordT> {
    const records = [{ type: 'TXT', name: `_svc-challenge.${r.domain}`, value: `svc-verify=${r.challenge}` }];
    const url = r.url_id ? await this.urls.byId(r.url_id, db) : undefined;
    if (url) records.push({ type: 'CNAME', name: r.domain, value: `${url.subdomain}.${this.cfg.tunnel_domain}` });
    return {
      domain_id: r.domain_id,
      domain: r.domain,
      ...(r.url_id ? { url_id: r.url_id } : {}),
      state: r.state,
      records,
      created_at: iso(Number(r.created_at)),
    };
  }

  private async row(accountId: string, domainId: string): Promise<DomainRow> {
    const r = (await this.db
      .selectFrom('public_url_domains')
      .selectAll()
      .where('domain_id', '=', domainId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()) as DomainRow | undefined;
    if (!r) throw apiError('not_found', `No domain ${domainId} in this account.`);
    return r;
  }

  /** POST /v1/public-url/domains: pending, with the records to publish; the same domain again is 409. */
  async create(trx: Transaction<any>, accountId: string, raw: string, urlId?: string): Promise<DomainRecordT> {
    const domain = hostDomain(raw);
    if (!domain)
      throw fieldError('domain', 'is not a domain name', `domain: "${raw.slice(0, 100)}" is not a domain name.`);
    if (
      domain === this.cfg.tunnel_domain
      || domain.endsWith(`.${this.cfg.tunnel_domain}`)
      || domain === this.urls.apiHost
    )
      throw fieldError('domain', "is the gateway's own", `domain: ${domain} is served by the gateway itself.`);
    if (urlId !== undefined) await this.urls.get(accountId, urlId, trx);
    const row: DomainRow = {
      domain_id: newId('dom'),
      account_id: accountId,
      domain,
      verified_domain: null,
      url_id: urlId ?? null,
      state: 'pending',
      challenge: base62(32),
      created_at: Date.now(),
      checked_at: null,
    };
    const taken = await trx
      .selectFrom('public_url_domains')
      .select('domain_id')
      .where('account_id', '=', accountId)
      .where('domain', '=', domain)
      .executeTakeFirst();
    if (taken) throw apiError('already_exists', `Domain ${domain} is already in this account (${taken.domain_id}).`);
    await trx.insertInto('public_url_domains').values(row).execute();
    return this.wire(row, trx);
  }

  async get(accountId: string, domainId: string): Promise<DomainRecordT> {
    return this.wire(await this.row(accountId, domainId));
  }

  async list(accountId: string, q: ListQueryT) {
    const query = this.db.selectFrom('public_url_domains').selectAll().where('account_id', '=', accountId);
    const rows = (await newestFirst(query, 'domain_id', q.limit + 1, decodeCursor(q.cursor)).execute()) as DomainRow[];
    const page = pageOf(
      rows,
      q.limit,
      (r) => ({ t: Number(r.created_at), id: r.domain_id }),
      (r) => r
    );
    return { items: await Promise.all(page.items.map((r) => this.wire(r))), next_cursor: page.next_cursor };
  }

  /** Look the TXT record up now: verified when it is there, failed (retry later) when not. */
  async verify(accountId: string, domainId: string): Promise<DomainRecordT> {
    const r = await this.row(accountId, domainId);
    const found = await this.challengeFound(r);
    const now = Date.now();
    const next: DomainRow = {
      ...r,
      state: found ? 'verified' : 'failed',
      verified_domain: found ? r.domain : null,
      checked_at: now,
    };
    try {
      await this.db
        .updateTable('public_url_domains')
        .set({ state: next.state, verified_domain: next.verified_domain, checked_at: now })
        .where('domain_id', '=', r.domain_id)
        .execute();
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      throw apiError('already_exists', `Domain ${r.domain} is verified by another account.`);
    }
    if (next.verified_domain && next.url_id) this.routes.set(next.domain, next.url_id);
    else this.routes.delete(r.domain);
    return this.wire(next);
  }

  private async challengeFound(r: DomainRow): Promise<boolean> {
    const resolver = new Resolver({ timeout: 2000, tries: 2 });
    if (this.cfg.dns_servers.length) resolver.setServers(this.cfg.dns_servers);
    try {
      const values = (await resolver.resolveTxt(`_svc-challenge.${r.domain}`)).map((chunks) => chunks.join(''));
      return values.some((v) => v.trim() === `svc-verify=${r.challenge}`);
    } catch {
      return false;
    }
  }
}
