import { capabilities, capability } from './capability.js';

// The captcha contract. `captcha.verify` asks one vendor whether a widget's token is a human's:
// the third-party services through their siteverify wire, the gateway's own proof of work
// (`service`) in process. A token belongs to the vendor whose widget made it, so no second
// vendor is ever tried. The checks the site key asks for (hostname, action, score) are the same
// for every vendor: `captchaVerdict` applies them to what the vendor answered.

/** What the caller's site key expects of a token; each check applies only when set. */
export interface CaptchaExpect {
  /** Hostnames the widget may run on: exact, or `*.example.com` for its subdomains. */
  hostnames?: string[];
  /** The action the widget was rendered with (Turnstile `action`, reCAPTCHA v3 `action`). */
  action?: string;
  /** Least score a score vendor's answer needs, 0.0 (a bot) to 1.0 (a human). */
  min_score?: number;
}

export interface CaptchaVerifyInput {
  /** What the widget put in the form. */
  token: string;
  remote_ip?: string;
  /**
   * The key that verifies the token: the site key's own secret for this vendor (for `service`,
   * the account's signing key); the instance's configured secret when absent.
   */
  secret?: string;
  /** The public site key the widget was rendered with (hCaptcha checks the token was made for it). */
  site_key?: string;
  expect?: CaptchaExpect;
  /** The same for every resend of one verification (Turnstile's `idempotency_key`, a UUID). */
  idempotency_key?: string;
}

export interface CaptchaVerifyOutput {
  valid: boolean;
  /** 0.0 (a bot) to 1.0 (a human), for score vendors; hCaptcha's risk score is turned around to fit. */
  score?: number;
  hostname?: string;
  action?: string;
  /** When the widget was solved (ISO 8601). */
  challenge_ts?: string;
  /** Why the token is refused (`vendor_rejected`, `hostname_mismatch`, `score_below_minimum`…). */
  reason?: string;
  /** The vendor's own error codes (`timeout-or-duplicate`…). */
  error_codes: string[];
  /**
   * For a vendor that leaves replay protection to the caller (`service`): the token's identity,
   * to remember until `expires_at` (epoch ms) and refuse a second time.
   */
  single_use?: { key: string; expires_at: number };
  /** Parameters the token carries under the vendor's signature (`service`: its site key id). */
  signed?: Record<string, string>;
}

/** The parts of a siteverify answer the checks read, as the vendor reported them. */
export interface SiteverifyAnswer {
  success: boolean;
  hostname?: string;
  action?: string;
  score?: number;
  challenge_ts?: string;
  error_codes: string[];
}

/** `host` on the list: an exact name, or a subdomain of a `*.example.com` entry. */
export function hostnameAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return allowed.some((a) => {
    const e = a.toLowerCase();
    return e.startsWith('*.') ? h.endsWith(e.slice(1)) && h.length > e.length - 1 : h === e;
  });
}

/** The verdict on a vendor's answer, with the checks the caller's expectations name; fail closed. */
export function captchaVerdict(answer: SiteverifyAnswer, expect: CaptchaExpect = {}): CaptchaVerifyOutput {
  const out: CaptchaVerifyOutput = { valid: false, error_codes: answer.error_codes };
  if (answer.score !== undefined) out.score = answer.score;
  if (answer.hostname) out.hostname = answer.hostname;
  if (answer.action) out.action = answer.action;
  if (answer.challenge_ts) out.challenge_ts = answer.challenge_ts;
  const refuse = (reason: string) => ({ ...out, reason });
  if (answer.success !== true) return refuse('vendor_rejected');
  if (expect.hostnames?.length && !(answer.hostname && hostnameAllowed(answer.hostname, expect.hostnames)))
    return refuse('hostname_mismatch');
  if (expect.action !== undefined && answer.action !== expect.action) return refuse('action_mismatch');
  if (expect.min_score !== undefined) {
    if (answer.score === undefined) return refuse('score_missing');
    if (answer.score < expect.min_score) return refuse('score_below_minimum');
  }
  return { ...out, valid: true };
}

/**
 * A siteverify JSON body read strictly: `success` must be the boolean true (a string "true" or
 * a missing field is a refusal), error codes kept as the vendor named them.
 */
export function readSiteverify(json: unknown): SiteverifyAnswer {
  const j = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const codes = Array.isArray(j['error-codes']) ? j['error-codes'].filter((c) => typeof c === 'string') : [];
  return {
    success: j.success === true,
    hostname: str(j.hostname),
    action: str(j.action),
    score: typeof j.score === 'number' && Number.isFinite(j.score) ? j.score : undefined,
    challenge_ts: str(j.challenge_ts),
    error_codes: codes,
  };
}

/** A siteverify form body: the fields set, in the vendor's names. */
export function siteverifyForm(fields: Record<string, string | undefined>): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== '') form.set(k, v);
  return form.toString();
}

export const CAPTCHA_CAPABILITIES = capabilities({
  // Not idempotent: a token is single-use at its vendor, and no other vendor can read it.
  'captcha.verify': capability<CaptchaVerifyInput, CaptchaVerifyOutput>({
    idempotent: false,
    description: "Verify a captcha widget's token with the vendor that issued it.",
  }),
});

/** A per-verification price in USD as micro-USD. */
export function perVerificationMicros(usd: number): number {
  return Math.round(usd * 1_000_000);
}
