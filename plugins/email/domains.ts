import { generateKeyPair, createPublicKey } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { promisify } from 'node:util';
import type { Kysely } from 'kysely';
import {
  apiError,
  base62,
  deriveKey,
  fieldError,
  iso,
  newId,
  open,
  seal,
  type EmailDkim,
} from '../../core/kit/area.js';
import { asciiDomain } from './address.js';
import type { EmailConfigT } from './config.js';

const keyPair = promisify(generateKeyPair);

interface Row {
  domain_id: string;
  account_id: string;
  domain: string;
  selector: string;
  public_key: string;
  private_key_sealed: string;
  verified_at: number | string | null;
  created_at: number | string;
}

export interface DnsRecordT {
  type: string;
  name: string;
  value: string;
}

/** The TXT record that publishes a public key (PEM SPKI) for DKIM: its base64 DER as `p=`. */
export function dkimValue(publicPem: string): string {
  const der = createPublicKey(publicPem).export({ type: 'spki', format: 'der' });
  return `v=DKIM1; k=rsa; p=${der.toString('base64')}`;
}

/**
 * Sending domains: created on the first verify with an RSA key pair (the private half sealed
 * under a key derived from the master key, bound to its row), a selector of its own, and the
 * DNS records that prove the account controls the domain. `verified` is what the last real DNS
 * lookup found, asked of the configured servers.
 */
export class DomainStore {
  private readonly key: Buffer;

  constructor(
    private readonly db: Kysely<any>,
    masterKey: Buffer,
    private readonly cfg: EmailConfigT
  ) {
    this.key = deriveKey(masterKey, 'svc-gateway email salt v1', 'email dkim keys v1');
  }

  records(row: Pick<Row, 'domain' | 'selector' | 'public_key'>): DnsRecordT[] {
    const spf = this.cfg.spf_include || 'a mx';
    return [
      { type: 'TXT', name: `${row.selector}._domainkey.${row.domain}`, value: dkimValue(row.public_key) },
      { type: 'TXT', name: row.domain, value: `v=spf1 ${spf} ~all` },
      { type: 'TXT', name: `_dmarc.${row.domain}`, value: this.cfg.dmarc_policy },
    ];
  }

  wire(row: Row, missing?: string[]) {
    return {
      domain_id: row.domain_id,
      domain: row.domain,
      verified: row.verified_at != null,
      selector: row.selector,
      records: this.records(row),
      ...(missing ? { missing } : {}),
      created_at: iso(Number(row.created_at)),
    };
  }

  private find(accountId: string, domain: string): Promise<Row | undefined> {
    return this.db
      .selectFrom('email_domains')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('domain', '=', domain)
      .executeTakeFirst() as Promise<Row | undefined>;
  }

  /** The account's domain, created with its key pair on the first call. */
  private async ensure(accountId: string, domain: string): Promise<Row> {
    const found = await this.find(accountId, domain);
    if (found) return found;
    const { publicKey, privateKey } = await keyPair('rsa', {
      modulusLength: this.cfg.dkim_key_bits,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const domainId = newId('dom');
    const row: Row = {
      domain_id: domainId,
      account_id: accountId,
      domain,
      selector: `svc${base62(8).toLowerCase()}`,
      public_key: publicKey,
      private_key_sealed: seal(this.key, privateKey, domainId),
      verified_at: null,
      created_at: Date.now(),
    };
    try {
      await this.db.insertInto('email_domains').values(row).execute();
      return row;
    } catch (e) {
      // Two first calls at once: the unique (account, domain) index keeps one; answer with it.
      const winner = await this.find(accountId, domain);
      if (winner) return winner;
      throw e;
    }
  }

  /** POST /v1/email/domains/verify: create on the first call, look the records up, remember the verdict. */
  async verify(accountId: string, raw: string) {
    const domain = asciiDomain(raw);
    if (!domain)
      throw fieldError('domain', 'is not a domain name', `domain: "${raw.slice(0, 100)}" is not a domain name.`);
    const row = await this.ensure(accountId, domain);
    const missing = await this.lookup(row);
    const verifiedAt = missing.length ? null : Date.now();
    await this.db
      .updateTable('email_domains')
      .set({ verified_at: verifiedAt })
      .where('domain_id', '=', row.domain_id)
      .execute();
    return this.wire({ ...row, verified_at: verifiedAt }, missing);
  }

  /** Which of dkim, spf and dmarc the DNS does not publish as required. */
  private async lookup(row: Row): Promise<string[]> {
    const resolver = new Resolver({ timeout: 2000, tries: 2 });
    if (this.cfg.dns_servers.length) resolver.setServers(this.cfg.dns_servers);
    const txt = async (name: string) => {
      try {
        return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
      } catch {
        return [];
      }
    };
    const squash = (s: string) => s.replace(/\s+/g, '');
    const [dkimWant] = this.records(row);
    const [dkim, spf, dmarc] = await Promise.all([txt(dkimWant.name), txt(row.domain), txt(`_dmarc.${row.domain}`)]);
    const missing: string[] = [];
    const pub = squash(dkimWant.value).match(/p=([^;]+)/)![1];
    if (!dkim.some((v) => squash(v).includes(`p=${pub}`))) missing.push('dkim');
    if (!spf.some((v) => /^v=spf1(\s|$)/i.test(v.trim()))) missing.push('spf');
    if (!dmarc.some((v) => /^v=DMARC1\s*(;|$)/i.test(v.trim()))) missing.push('dmarc');
    return missing;
  }

  async list(accountId: string) {
    const rows = (await this.db
      .selectFrom('email_domains')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('domain_id', 'desc')
      .execute()) as Row[];
    return rows.map((r) => this.wire(r));
  }

  async remove(accountId: string, raw: string): Promise<void> {
    const domain = asciiDomain(raw) ?? raw;
    const r = await this.db
      .deleteFrom('email_domains')
      .where('account_id', '=', accountId)
      .where('domain', '=', domain)
      .executeTakeFirst();
    if (!Number(r.numDeletedRows))
      throw apiError('not_found', `No domain ${raw} in this account.`, { param: 'domain' });
  }

  /** The signing key of a verified domain of the account, or undefined when it has none. */
  async signer(accountId: string, domain: string): Promise<EmailDkim | undefined> {
    const row = await this.find(accountId, domain);
    if (!row || row.verified_at == null) return undefined;
    return { domain, selector: row.selector, private_key: open(this.key, row.private_key_sealed, row.domain_id) };
  }
}
