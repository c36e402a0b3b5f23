import { Type } from '@sinclair/typebox';
import { defineVendor, siteverifyCapability, siteverifyConfig } from '../../core/kit/vendor.js';
import { TURNSTILE_USD_PER_VERIFICATION } from './prices.js';

/**
 * Cloudflare Turnstile over its siteverify wire: `POST /turnstile/v0/siteverify`, a form of
 * `secret, response, remoteip, idempotency_key`; the answer names the hostname and action the
 * widget ran with, which the site key's expectations are checked against. A token is good
 * once and for 300 s; the idempotency key lets a resend of one verification read the same answer.
 */
export default defineVendor({
  name: 'turnstile',
  regions: ['global'],
  configSchema: Type.Object(
    siteverifyConfig({
      secretHint: "The widget's secret key",
      baseUrl: 'https://challenges.cloudflare.com',
      price: TURNSTILE_USD_PER_VERIFICATION,
      priceHint: 'What one verification costs the operator (Turnstile is free).',
    }),
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const verify = siteverifyCapability(config, ctx, {
      vendor: 'turnstile',
      path: '/turnstile/v0/siteverify',
      fields: (input) => ({ remoteip: input.remote_ip, idempotency_key: input.idempotency_key }),
    });
    return { capabilities: { 'captcha.verify': verify } };
  },
});
