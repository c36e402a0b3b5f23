import { Type, type Static } from '@sinclair/typebox';

/** `plugins.sms` in the config file. OTP limits default to Twilio Verify's. */
export const SmsConfig = Type.Object(
  {
    default_from: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 20,
        description: "Sender of a send that names none; else the vendor's own default (Twilio's `from`).",
      })
    ),
    status_callbacks: Type.Boolean({
      default: true,
      description:
        'Ask vendors to post delivery reports to <server.public_url>/v1/sms/status/<instance>; '
        + 'off when the gateway cannot be reached from the internet.',
    }),
    otp_message: Type.String({
      minLength: 1,
      maxLength: 300,
      pattern: '\\{code\\}',
      default: 'Your verification code is {code}. It expires in 10 minutes.',
      description: 'Text of a POST /v1/sms/otp message; {code} is replaced by the passcode.',
    }),
    otp_ttl_seconds: Type.Integer({
      minimum: 60,
      maximum: 3600,
      default: 600,
      description: 'How long a passcode is valid.',
    }),
    otp_max_checks: Type.Integer({
      minimum: 1,
      maximum: 20,
      default: 5,
      description:
        'Wrong codes accepted for one passcode; then it is locked until it expires (429 otp_attempts_exceeded).',
    }),
    otp_resend_seconds: Type.Integer({
      minimum: 0,
      maximum: 3600,
      default: 30,
      description: 'Least time between two passcodes sent to one number by one account (429 rate_limited).',
    }),
    otp_max_sends: Type.Integer({
      minimum: 1,
      maximum: 50,
      default: 5,
      description:
        'Passcodes sent to one number without a successful check, within otp_ttl_seconds of the first; '
        + 'then 429 rate_limited until that window ends.',
    }),
    otp_retention_days: Type.Integer({
      minimum: 0,
      maximum: 3650,
      default: 1,
      description: "Days a number's passcode row is kept after its passcode expired (retention job); 0 keeps them.",
    }),
  },
  { additionalProperties: false, default: {} }
);

export type SmsConfigT = Static<typeof SmsConfig>;
