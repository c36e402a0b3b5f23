import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import {
  decodeAltcha,
  fieldError,
  isApiError,
  saltParams,
  type Attempt,
  type CaptchaExpect,
  type CaptchaVerifyInput,
  type CaptchaVerifyOutput,
  type Svc,
} from '../../core/kit/area.js';
import type { CaptchaConfigT } from './config.js';
import type { ReplayStore } from './replay.js';
import type { CaptchaVerifyResultT, VerifyBodyT } from './schemas.js';
import { THIRD_PARTY } from './schemas.js';
import { accountSigningKey } from './signing-key.js';
import type { SiteKeyRow, SiteKeyStore } from './site-keys.js';

export const SERVICE = 'service';
const CAPABILITY = 'captcha.verify';

/** A token refused before or instead of a vendor's verdict. */
const refused = (vendor: string, reason: string, site?: SiteKeyRow): CaptchaVerifyResultT => ({
  valid: false,
  vendor,
  reason,
  error_codes: [],
  ...(site ? { site_key_id: site.site_key_id } : {}),
});

/**
 * POST /v1/captcha/verify: the vendor the token belongs to (named, or read from the token), the
 * site key's secret and checks, one `captcha.verify` call that is never sent to a second vendor,
 * and for `service` the replay store. Fails closed: a vendor that times out or answers nonsense
 * is `valid: false` with a reason, and is not charged.
 */
export class CaptchaVerifier {
  constructor(
    private readonly svc: Svc,
    private readonly cfg: CaptchaConfigT,
    private readonly keys: SiteKeyStore,
    private readonly replay: ReplayStore
  ) {}

  async verify(req: FastifyRequest, b: VerifyBodyT): Promise<CaptchaVerifyResultT> {
    const p = req.principal!;
    const altcha = decodeAltcha(b.token);
    let site = b.site_key_id ? await this.keys.get(p.accountId, b.site_key_id) : undefined;
    const pin = b.vendor ?? (altcha ? SERVICE : this.soleVendor(site, p.region));
    const inst = this.svc.router.candidates(CAPABILITY, { vendor: pin, region: p.region })[0];
    if (!inst) this.svc.router.assertServed(CAPABILITY, { vendor: pin, region: p.region });
    const adapter = inst.adapter;
    const service = adapter === SERVICE;
    if (service && b.min_score !== undefined)
      throw fieldError(
        'min_score',
        'applies to score vendors only',
        'min_score: the service proof of work has no score.'
      );
    if (service) {
      // Which site key the solution names (signed; checked by the vendor): its hostnames apply.
      const named = altcha && saltParams(altcha.salt).sk;
      if (!named) return refused(inst.id, 'malformed_token', site);
      if (site && site.site_key_id !== named) return refused(inst.id, 'site_key_mismatch', site);
      site ??= await this.keys.get(p.accountId, named).catch(() => undefined);
      // A key deleted since (or another account's): nothing to check the token against.
      if (!site) return refused(inst.id, 'site_key_unknown');
    }
    const expect: CaptchaExpect = {};
    if (site?.allowed_hostnames.length) expect.hostnames = site.allowed_hostnames;
    if (!service && site?.expected_action) expect.action = site.expected_action;
    const minScore = b.min_score ?? (service ? undefined : (site?.min_score ?? undefined));
    if (minScore !== undefined) expect.min_score = minScore;
    const input: CaptchaVerifyInput = {
      token: b.token,
      remote_ip: b.remote_ip,
      secret: service ? accountSigningKey(this.svc.masterKey, p.accountId) : site && this.keys.secret(site, adapter),
      site_key: site?.vendors[adapter as keyof SiteKeyRow['vendors']]?.site_key,
      expect,
      idempotency_key: randomUUID(),
    };
    let out: CaptchaVerifyOutput;
    try {
      const r = await this.svc.router.call<CaptchaVerifyInput, CaptchaVerifyOutput>(CAPABILITY, input, {
        accountId: p.accountId,
        region: p.region,
        vendor: inst.id,
        meter: req.meter,
        ref: req.id,
        timeoutMs: this.cfg.timeout_seconds * 1000,
      });
      out = r.output;
    } catch (e) {
      if (!isApiError(e) || (e.code !== 'vendor_error' && e.code !== 'vendor_timeout')) throw e;
      const attempt = (e.details.attempts as Attempt[] | undefined)?.at(-1);
      return refused(inst.id, `vendor_${attempt?.status ?? 'unavailable'}`, site);
    }
    if (out.valid && out.single_use) {
      const first = await this.replay.spend(out.single_use.key, p.accountId, out.single_use.expires_at);
      if (!first) out = { ...out, valid: false, reason: 'replayed' };
    }
    return {
      valid: out.valid,
      vendor: inst.id,
      error_codes: out.error_codes,
      ...(out.score !== undefined ? { score: out.score } : {}),
      ...(out.hostname ? { hostname: out.hostname } : {}),
      ...(out.action ? { action: out.action } : {}),
      ...(out.challenge_ts ? { challenge_ts: out.challenge_ts } : {}),
      ...(out.reason ? { reason: out.reason } : {}),
      ...(site ? { site_key_id: site.site_key_id } : {}),
    };
  }

  /** The vendor of a token that does not say: the site key's only one, else the only one configured. */
  private soleVendor(site: SiteKeyRow | undefined, region?: string): string {
    const ofSite = site ? THIRD_PARTY.filter((v) => site.vendors[v]) : [];
    if (ofSite.length === 1) return ofSite[0];
    const configured = this.svc.router
      .candidates(CAPABILITY, { region })
      .filter((i) => i.adapter !== SERVICE)
      .map((i) => i.id);
    if (configured.length === 1) return configured[0];
    throw fieldError(
      'vendor',
      'is required',
      `vendor is required: the token is not a service solution, and ${
        configured.length
          ? `several vendors could have issued it (${configured.join(', ')})`
          : 'no captcha vendor is configured'
      }.`
    );
  }
}
