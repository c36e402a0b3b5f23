import { apiError, type Svc } from '../../core/kit/area.js';
import { SERVICE } from './verify.js';
import type { SiteKeyRow } from './site-keys.js';
import type { ThirdParty } from './schemas.js';

const attr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Each vendor's script and element, as its docs have a page write them. */
const THIRD_PARTY_WIDGETS: Record<
  ThirdParty,
  (key: string, site: SiteKeyRow, v3: boolean) => { html: string; script_url: string }
> = {
  turnstile: (key, site) => ({
    script_url: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    html: `<div class="cf-turnstile" data-sitekey="${attr(key)}"${
      site.expected_action ? ` data-action="${attr(site.expected_action)}"` : ''
    }></div>`,
  }),
  hcaptcha: (key) => ({
    script_url: 'https://js.hcaptcha.com/1/api.js',
    html: `<div class="h-captcha" data-sitekey="${attr(key)}"></div>`,
  }),
  recaptcha: (key, site, v3) =>
    v3
      ? {
          // v3 has no element: the page asks for a token on submit and puts it in this field.
          script_url: `https://www.google.com/recaptcha/api.js?render=${encodeURIComponent(key)}`,
          html: `<input type="hidden" name="g-recaptcha-response" data-sitekey="${attr(key)}" data-action="${attr(
            site.expected_action ?? 'submit'
          )}">`,
        }
      : {
          script_url: 'https://www.google.com/recaptcha/api.js',
          html: `<div class="g-recaptcha" data-sitekey="${attr(key)}"></div>`,
        },
};

/** The element and script for a page: the gateway's own for `service`, the vendor's otherwise. */
export function widgetFor(svc: Svc, instanceId: string, adapter: string, site: SiteKeyRow) {
  const base = svc.config.server.public_url;
  const sitePath = `captcha/sites/${site.site_key_id}`;
  if (adapter === SERVICE)
    return {
      script_url: `${base}/${sitePath}/widget.js`,
      html: `<altcha-widget challenge="${attr(`${base}/v1/${sitePath}/challenge`)}" name="captcha"></altcha-widget>`,
    };
  const keys = site.vendors[adapter as ThirdParty];
  if (!keys)
    throw apiError(
      'unprocessable',
      `Site key ${site.site_key_id} holds no ${adapter} site key: add one with PATCH /v1/captcha/site-keys/${site.site_key_id}.`,
      { param: 'site_key_id' }
    );
  const v3 = svc.vendors.get(instanceId)?.redactedConfig?.version === 'v3';
  return THIRD_PARTY_WIDGETS[adapter as ThirdParty](keys.site_key, site, v3);
}
