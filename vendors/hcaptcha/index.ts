import { Type } from '@sinclair/typebox';
import { defineVendor, siteverifyCapability, siteverifyConfig } from '../../core/kit/vendor.js';
import { HCAPTCHA_USD_PER_VERIFICATION } from './prices.js';

/**
 * hCaptcha over its siteverify wire: `POST /siteverify`, form only, `secret, response, remoteip,
 * sitekey` (with the site key hCaptcha refuses a token made for another one). Enterprise accounts
 * get a risk `score`, 0.0 (no risk) to 1.0 (a threat): turned around here (1 - risk), so every
 * vendor's score and `min_score` read the same way, higher is more human.
 */
export default defineVendor({
  name: 'hcaptcha',
  regions: ['global'],
  configSchema: Type.Object(
    siteverifyConfig({
      secretHint: "The account's secret (0x…)",
      baseUrl: 'https://api.hcaptcha.com',
      price: HCAPTCHA_USD_PER_VERIFICATION,
      priceHint: "What one verification costs the operator (0 on the free plan; 0.00099 past Pro's quota).",
    }),
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const verify = siteverifyCapability(config, ctx, {
      vendor: 'hcaptcha',
      path: '/siteverify',
      fields: (input) => ({ remoteip: input.remote_ip, sitekey: input.site_key }),
      adjust: (a) => (a.score === undefined ? a : { ...a, score: Math.round((1 - a.score) * 1000) / 1000 }),
    });
    return { capabilities: { 'captcha.verify': verify } };
  },
});
