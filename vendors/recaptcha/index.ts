import { Type } from '@sinclair/typebox';
import { defineVendor, siteverifyCapability, siteverifyConfig } from '../../core/kit/vendor.js';
import { RECAPTCHA_USD_PER_VERIFICATION } from './prices.js';

/**
 * Google reCAPTCHA over its siteverify wire: `POST /recaptcha/api/siteverify`, a form of
 * `secret, response, remoteip`. v2 (the checkbox) answers success alone; v3 adds a `score`,
 * 0.0 to 1.0, and the `action` the page ran, so a v3 instance asks for a least score
 * (`min_score`, Google's suggested 0.5) when neither the call nor the site key names one.
 */
export default defineVendor({
  name: 'recaptcha',
  regions: ['global'],
  configSchema: Type.Object(
    {
      version: Type.Union([Type.Literal('v2'), Type.Literal('v3')], {
        default: 'v3',
        description: 'v2 (checkbox or invisible, no score) or v3 (a score per action).',
      }),
      min_score: Type.Number({
        minimum: 0,
        maximum: 1,
        default: 0.5,
        description: 'v3: least score accepted when neither the call nor the site key names one.',
      }),
      ...siteverifyConfig({
        secretHint: 'The secret key',
        baseUrl: 'https://www.google.com',
        price: RECAPTCHA_USD_PER_VERIFICATION,
        priceHint: 'What one verification costs the operator (past the free 10,000 a month).',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const verify = siteverifyCapability(config, ctx, {
      vendor: 'recaptcha',
      path: '/recaptcha/api/siteverify',
      fields: (input) => ({ remoteip: input.remote_ip }),
      expect: (e) => (config.version === 'v3' ? { ...e, min_score: e.min_score ?? config.min_score } : e),
    });
    return { capabilities: { 'captcha.verify': verify } };
  },
});
