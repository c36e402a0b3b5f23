import type { ListQuery, RequestOptions } from './types.js';

/** One call's parts beyond method and path: the query string, the JSON body, whether to send the key. */
export interface CallInit extends RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Send the key (default true). */
  auth?: boolean;
}

/**
 * How an area's methods reach the gateway: SvcClient.request, so every area shares one key,
 * one fetch, one time limit, `lastCost` and the SvcError mapping.
 */
export type Requester = <T>(method: string, path: string, init?: CallInit) => Promise<T>;

/** A path segment from a caller's value: `../x` or `a@b.c` stay one segment. */
export const seg = (v: string): string => encodeURIComponent(v);

/** A list's page parameters, and nothing else the caller's object carries. */
export const pageQuery = (q: ListQuery): CallInit['query'] => ({ limit: q.limit, cursor: q.cursor });
