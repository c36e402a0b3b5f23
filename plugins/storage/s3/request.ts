import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StorageService } from '../service.js';
import type { S3Auth } from './verify.js';

/**
 * A parsed request to the S3 endpoint, handed to the operation handlers. In its own file so that
 * the handlers need not import the endpoint that dispatches to them.
 */
export interface S3Request {
  req: FastifyRequest;
  reply: FastifyReply;
  storage: StorageService;
  auth: S3Auth | null;
  /** Whose buckets: the signer's, or the account named in the path (`/s3/acct_…/bucket/key`). */
  accountId: string | undefined;
  bucket: string;
  key: string;
  query: Map<string, string>;
}
