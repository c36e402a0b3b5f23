import { Type, type Static } from '@sinclair/typebox';
import { Page } from '../../core/kit/area.js';

// The captcha wire, the single source of validation, serialization, OpenAPI and discovery.

/** The third-party adapters a site key may hold a widget key and secret for. */
export const THIRD_PARTY = ['turnstile', 'hcaptcha', 'recaptcha'] as const;
export type ThirdParty = (typeof THIRD_PARTY)[number];

const Hostname = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$',
  description: 'A hostname the widget may run on, or `*.example.com` for its subdomains.',
});

const VendorKeysIn = Type.Object(
  {
    site_key: Type.String({ minLength: 1, maxLength: 200, description: "The vendor's public site key." }),
    secret: Type.String({ minLength: 1, maxLength: 500, description: "The vendor's secret key; stored sealed." }),
  },
  { additionalProperties: false }
);

const VendorsIn = Type.Object(
  Object.fromEntries(THIRD_PARTY.map((v) => [v, Type.Optional(Type.Union([VendorKeysIn, Type.Null()]))])),
  { additionalProperties: false, description: 'Per vendor: its site key and secret (null removes them).' }
);

const SiteKeyFields = {
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  allowed_hostnames: Type.Optional(
    Type.Array(Hostname, {
      maxItems: 50,
      description: 'Hostnames whose pages may use this key; empty: any (CORS answers any origin).',
    })
  ),
  difficulty: Type.Optional(
    Type.Integer({
      minimum: 1000,
      maximum: 10_000_000,
      description: '`service` proof of work: ALTCHA maxnumber (a browser tries half of it on average).',
    })
  ),
  expected_action: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
      description: 'The action a Turnstile or reCAPTCHA v3 token must carry.',
    })
  ),
  min_score: Type.Optional(
    Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description: 'Least score for score vendors when the call names none.',
    })
  ),
  vendors: Type.Optional(VendorsIn),
};

export const SiteKeyCreate = Type.Object(
  { ...SiteKeyFields, idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) },
  { additionalProperties: false, examples: [{ label: 'signup form', allowed_hostnames: ['shop.example.com'] }] }
);
export type SiteKeyCreateT = Static<typeof SiteKeyCreate>;

export const SiteKeyUpdate = Type.Object(SiteKeyFields, { additionalProperties: false });
export type SiteKeyUpdateT = Static<typeof SiteKeyUpdate>;

const VendorKeysOut = Type.Object({
  site_key: Type.String(),
  secret_set: Type.Boolean({ description: 'A secret is stored (never returned).' }),
});

export const SiteKey = Type.Object({
  site_key_id: Type.String({ description: 'Public: safe in a web page.' }),
  label: Type.String(),
  allowed_hostnames: Type.Array(Type.String()),
  difficulty: Type.Integer(),
  expected_action: Type.Union([Type.String(), Type.Null()]),
  min_score: Type.Union([Type.Number(), Type.Null()]),
  vendors: Type.Record(Type.String(), VendorKeysOut),
  challenge_url: Type.String({ description: 'The `service` widget fetches its challenges here (no key).' }),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type SiteKeyT = Static<typeof SiteKey>;
export const SiteKeyList = Page(SiteKey);

export const SiteKeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const VerifyBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 8192, description: 'What the browser widget put in the form.' }),
    vendor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        description: '`service`, `turnstile`, `hcaptcha`, `recaptcha` or an instance id; else read from the token.',
      })
    ),
    remote_ip: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "The end user's IP." })),
    min_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Score vendors: least score.' })),
    site_key_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Whose secret and checks apply (beyond the spec).' })
    ),
  },
  { additionalProperties: false, examples: [{ token: 'eyJhbGdvcml0aG0iOi...', vendor: 'service' }] }
);
export type VerifyBodyT = Static<typeof VerifyBody>;

export const CaptchaVerifyResult = Type.Object({
  valid: Type.Boolean(),
  score: Type.Optional(Type.Number({ description: '0.0 (a bot) to 1.0 (a human).' })),
  vendor: Type.String(),
  hostname: Type.Optional(Type.String()),
  action: Type.Optional(Type.String()),
  challenge_ts: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String({ description: 'Why the token was refused.' })),
  error_codes: Type.Array(Type.String(), { description: "The vendor's own codes." }),
  site_key_id: Type.Optional(Type.String()),
});
export type CaptchaVerifyResultT = Static<typeof CaptchaVerifyResult>;

export const WidgetBody = Type.Object(
  {
    vendor: Type.Optional(Type.String({ minLength: 1, maxLength: 63, description: 'Default `service`.' })),
    site_key_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "Default: the account's first site key." })
    ),
  },
  { additionalProperties: false }
);
export type WidgetBodyT = Static<typeof WidgetBody>;

export const WidgetResult = Type.Object({
  html: Type.String({ description: 'The element to put inside the form.' }),
  script_url: Type.String({ description: 'The script the page loads once.' }),
  site_key_id: Type.String(),
  vendor: Type.String(),
});
