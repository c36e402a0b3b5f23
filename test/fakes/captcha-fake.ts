import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Tap } from '../helpers/tap.js';

// One loopback server speaking the three siteverify wires as their vendors do:
// Turnstile `POST /turnstile/v0/siteverify` (form or JSON; a token good once, but a resend with
// the same idempotency_key reads the first answer), hCaptcha `POST /siteverify` (form only,
// `sitekey` checked against the token), reCAPTCHA `POST /recaptcha/api/siteverify` (form; v3
// answers `score` and `action`). Tokens are issued by the test as a widget would get them.

export type CaptchaVendorId = 'turnstile' | 'hcaptcha' | 'recaptcha';
export const CAPTCHA_SECRETS: Record<CaptchaVendorId, string> = {
  turnstile: '0x4AAAAAAA-fake-turnstile-secret',
  hcaptcha: '0x-fake-hcaptcha-secret-4f1e',
  recaptcha: '6Lc-fake-recaptcha-secret-91a',
};
const PATHS: Record<string, CaptchaVendorId> = {
  '/turnstile/v0/siteverify': 'turnstile',
  '/siteverify': 'hcaptcha',
  '/recaptcha/api/siteverify': 'recaptcha',
};

export interface IssuedToken {
  vendor: CaptchaVendorId;
  hostname: string;
  action?: string;
  score?: number;
  sitekey?: string;
  secret?: string;
}

export interface SiteverifyCall {
  vendor: CaptchaVendorId;
  contentType: string;
  fields: Record<string, string>;
}

/** What the next call gets instead of an answer: no answer at all, HTML, or a 5xx. */
export type CaptchaFault = 'hang' | 'html' | 500;

export async function captchaFake(t: Tap) {
  const tokens = new Map<string, IssuedToken>();
  const spent = new Map<string, { idem?: string; answer: unknown }>();
  const calls: SiteverifyCall[] = [];
  const faults: CaptchaFault[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const vendor = PATHS[req.url ?? ''];
    if (req.method !== 'POST' || !vendor) return json(404, { success: false, 'error-codes': ['not-found'] });
    const contentType = String(req.headers['content-type'] ?? '');
    const isJson = contentType.startsWith('application/json');
    // hCaptcha and reCAPTCHA read a form only: a JSON body is a request with no fields.
    const fields: Record<string, string> =
      isJson && vendor === 'turnstile' ? JSON.parse(text) : isJson ? {} : Object.fromEntries(new URLSearchParams(text));
    calls.push({ vendor, contentType, fields });
    const fault = faults.shift();
    if (fault === 'hang') return void hanging.add(res);
    if (fault === 'html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
    if (fault === 500) return json(500, { success: false });
    const refuse = (...codes: string[]) => json(200, { success: false, 'error-codes': codes });
    if (!fields.secret) return refuse('missing-input-secret');
    if (!fields.response) return refuse('missing-input-response');
    const issued = tokens.get(fields.response);
    const secret = issued?.secret ?? CAPTCHA_SECRETS[vendor];
    if (fields.secret !== secret) return refuse('invalid-input-secret');
    if (!issued || issued.vendor !== vendor) return refuse('invalid-input-response');
    const before = spent.get(fields.response);
    if (before) {
      if (vendor === 'turnstile' && fields.idempotency_key && before.idem === fields.idempotency_key)
        return json(200, before.answer);
      return refuse('timeout-or-duplicate');
    }
    if (vendor === 'hcaptcha' && fields.sitekey && issued.sitekey && fields.sitekey !== issued.sitekey)
      return refuse('sitekey-secret-mismatch');
    const answer: Record<string, unknown> = {
      success: true,
      challenge_ts: new Date().toISOString(),
      hostname: issued.hostname,
      'error-codes': [],
    };
    if (issued.action !== undefined) answer.action = issued.action;
    if (issued.score !== undefined) answer.score = issued.score;
    if (vendor === 'turnstile') answer.cdata = '';
    spent.set(fields.response, { idem: fields.idempotency_key, answer });
    return json(200, answer);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.close(() => r());
      })
  );
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    calls,
    /** A token as the vendor's widget hands it to the browser. */
    issue(token: IssuedToken): string {
      const id = `${token.vendor}.${randomBytes(12).toString('base64url')}`;
      tokens.set(id, token);
      return id;
    },
    failNext: (...f: CaptchaFault[]) => faults.push(...f),
  };
}
