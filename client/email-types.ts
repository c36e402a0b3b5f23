import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  DomainRecord as DomainRecordSchema,
  EmailListQuery as EmailListQuerySchema,
  EmailRecord as EmailRecordSchema,
  RawResult,
  SendBody,
  SuppressBody,
  SuppressionRecord as SuppressionRecordSchema,
  TemplateBody,
  TemplateRecord as TemplateRecordSchema,
} from '../plugins/email/schemas.js';
import type { PageOf } from './paginate.js';

// The email area's wire, from the TypeBox schemas the server validates and serializes with.

export type SendEmailRequest = Static<typeof SendBody>;
export type EmailRecord = Static<typeof EmailRecordSchema>;
export type EmailState = EmailRecord['state'];
export type EmailPage = PageOf<EmailRecord>;
/** `limit` (1 to 200, default 50), `cursor`, and a `state` to keep. */
export type EmailListQuery = Partial<Static<typeof EmailListQuerySchema>>;
export type EmailRaw = Static<typeof RawResult>;

export type EmailDomain = Static<typeof DomainRecordSchema>;
export interface EmailDomainList {
  items: EmailDomain[];
}

export type SuppressRequest = Static<typeof SuppressBody>;
export type Suppression = Static<typeof SuppressionRecordSchema>;
export type SuppressionPage = PageOf<Suppression>;

export type EmailTemplateRequest = Static<typeof TemplateBody>;
export type EmailTemplate = Static<typeof TemplateRecordSchema>;
export type EmailTemplatePage = PageOf<EmailTemplate>;
