import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  CapturedMessage,
  ListFilter,
  OtpBody,
  OtpResult,
  SendBody,
  SmsRecord as SmsRecordSchema,
  VerifyBody,
  VerifyResult,
} from '../plugins/sms/schemas.js';
import type { PageOf } from './paginate.js';
import type { ListQuery } from './types.js';

// The SMS area's wire, from the TypeBox schemas the server validates and serializes with.

export type SendSmsRequest = Static<typeof SendBody>;
export type SmsRecord = Static<typeof SmsRecordSchema>;
export type SmsState = SmsRecord['state'];
export type SmsPage = PageOf<SmsRecord>;
export type SmsListQuery = ListQuery & Static<typeof ListFilter>;
export type CapturedSms = Static<typeof CapturedMessage>;
export type OtpRequest = Static<typeof OtpBody>;
export type OtpResponse = Static<typeof OtpResult>;
export type VerifyOtpRequest = Static<typeof VerifyBody>;
export type VerifyOtpResponse = Static<typeof VerifyResult>;
