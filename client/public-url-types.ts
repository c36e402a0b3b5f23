import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  AnonymousBody,
  AnonymousRecord,
  CreateBody,
  DomainBody,
  DomainRecord as DomainRecordSchema,
  PublicUrlRecord as PublicUrlRecordSchema,
} from '../plugins/public-url/schemas.js';
import type { PageOf } from './paginate.js';

// The public URL area's wire, from the TypeBox schemas the server validates and serializes with.

export type CreatePublicUrlRequest = Static<typeof CreateBody>;
export type AnonymousPublicUrlRequest = Static<typeof AnonymousBody>;
export type PublicUrlRecord = Static<typeof PublicUrlRecordSchema>;
export type AnonymousPublicUrl = Static<typeof AnonymousRecord>;
export type PublicUrlState = PublicUrlRecord['state'];
export type PublicUrlPage = PageOf<PublicUrlRecord>;
export type CreateDomainRequest = Static<typeof DomainBody>;
export type PublicUrlDomain = Static<typeof DomainRecordSchema>;
export type PublicUrlDomainPage = PageOf<PublicUrlDomain>;
