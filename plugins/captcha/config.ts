import { Type, type Static } from '@sinclair/typebox';

/** `plugins.captcha` in the config file. */
export const CaptchaConfig = Type.Object(
  {
    timeout_seconds: Type.Number({
      exclusiveMinimum: 0,
      maximum: 60,
      default: 10,
      description: 'How long a siteverify call may take; past it the token is answered valid: false (vendor_timeout).',
    }),
    challenge_ttl_seconds: Type.Integer({
      minimum: 10,
      maximum: 3600,
      default: 300,
      description: 'How long a `service` challenge may be solved and submitted after it was issued.',
    }),
    default_difficulty: Type.Integer({
      minimum: 1000,
      maximum: 10_000_000,
      default: 50_000,
      description:
        "A new site key's proof-of-work difficulty (ALTCHA maxnumber: a browser tries half of it on average).",
    }),
    replay_retention_days: Type.Integer({
      minimum: 1,
      maximum: 365,
      default: 1,
      description:
        'Days a spent `service` solution is remembered past its expiry (retention job); it is refused until then.',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type CaptchaConfigT = Static<typeof CaptchaConfig>;
