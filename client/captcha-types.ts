import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  CaptchaVerifyResult as CaptchaVerifyResultSchema,
  SiteKey as SiteKeySchema,
  SiteKeyCreate,
  SiteKeyUpdate,
  VerifyBody,
  WidgetBody,
  WidgetResult,
} from '../plugins/captcha/schemas.js';
import type { PageOf } from './paginate.js';

// The captcha area's wire, from the TypeBox schemas the server validates and serializes with.

export type CaptchaVerifyRequest = Static<typeof VerifyBody>;
export type CaptchaVerifyResult = Static<typeof CaptchaVerifyResultSchema>;
export type CaptchaWidgetRequest = Static<typeof WidgetBody>;
export type CaptchaWidget = Static<typeof WidgetResult>;
export type CaptchaSiteKey = Static<typeof SiteKeySchema>;
export type CaptchaSiteKeyRequest = Omit<Static<typeof SiteKeyCreate>, 'idempotency_key'>;
export type CaptchaSiteKeyUpdate = Static<typeof SiteKeyUpdate>;
export type CaptchaSiteKeyPage = PageOf<CaptchaSiteKey>;

/** An ALTCHA v1 challenge, what the `service` widget fetches and solves. */
export interface CaptchaChallenge {
  algorithm: string;
  challenge: string;
  maxnumber: number;
  salt: string;
  signature: string;
}
