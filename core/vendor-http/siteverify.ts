import { Type } from '@sinclair/typebox';
import {
  captchaVerdict,
  perVerificationMicros,
  readSiteverify,
  siteverifyForm,
  type CaptchaExpect,
  type CaptchaVerifyInput,
  type CaptchaVerifyOutput,
  type SiteverifyAnswer,
} from '../capabilities/captcha.js';
import { secret, type InvokeOptions, type VendorContext } from '../vendor-api.js';
import { VendorFailure } from '../router/failure.js';
import { joinUrl, readJson, vendorFetch } from './http.js';

/**
 * One siteverify POST as Turnstile, hCaptcha and reCAPTCHA all take it: a form body, a JSON
 * answer read strictly. A refusal to answer (5xx, 429, a dropped connection) and a body that
 * is not JSON are the router's failures, which the captcha area turns into `valid: false`.
 */
export async function postSiteverify(
  fetchFn: typeof fetch,
  url: string,
  fields: Record<string, string | undefined>,
  vendor: string,
  signal: AbortSignal
): Promise<SiteverifyAnswer> {
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: siteverifyForm(fields),
    signal,
  };
  const res = await vendorFetch(fetchFn, url, init, vendor);
  return readSiteverify(await readJson<unknown>(res, vendor));
}

/** The config every siteverify vendor takes: an optional secret, its endpoint, its price. */
export function siteverifyConfig(o: { secretHint: string; baseUrl: string; price: number; priceHint: string }) {
  return {
    secret_key: Type.Optional(
      secret(Type.String({ minLength: 1, description: `${o.secretHint}, for site keys that carry none of their own.` }))
    ),
    base_url: Type.String({ default: o.baseUrl }),
    price_usd_per_verification: Type.Number({ minimum: 0, default: o.price, description: o.priceHint }),
  };
}

export interface SiteverifyWire {
  vendor: string;
  /** The path under `base_url`. */
  path: string;
  /** The form fields beside `secret` and `response`. */
  fields(input: CaptchaVerifyInput): Record<string, string | undefined>;
  /** What the vendor's answer means in the contract's terms (a risk score turned around…). */
  adjust?(answer: SiteverifyAnswer): SiteverifyAnswer;
  /** The checks beyond the caller's (a default least score). */
  expect?(expect: CaptchaExpect): CaptchaExpect;
}

/** `captcha.verify` over a siteverify wire: the site key's secret or the instance's, the verdict checked. */
export function siteverifyCapability(
  config: { secret_key?: string; base_url: string; price_usd_per_verification: number },
  ctx: VendorContext,
  wire: SiteverifyWire
) {
  const url = joinUrl(config.base_url, wire.path);
  return {
    async invoke(input: CaptchaVerifyInput, { signal }: InvokeOptions): Promise<CaptchaVerifyOutput> {
      const key = input.secret ?? config.secret_key;
      if (!key) throw new VendorFailure('auth', `${wire.vendor}: no secret key on the site key or the instance`);
      const fields = { secret: key, response: input.token, ...wire.fields(input) };
      const answer = await postSiteverify(ctx.fetch, url, fields, wire.vendor, signal);
      const expect = wire.expect ? wire.expect({ ...input.expect }) : input.expect;
      return captchaVerdict(wire.adjust ? wire.adjust(answer) : answer, expect);
    },
    price: () => perVerificationMicros(config.price_usd_per_verification),
  };
}
