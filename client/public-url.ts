import { pageQuery, seg, type Requester } from './call.js';
import { paginate } from './paginate.js';
import type {
  AnonymousPublicUrl,
  AnonymousPublicUrlRequest,
  CreateDomainRequest,
  CreatePublicUrlRequest,
  PublicUrlDomain,
  PublicUrlDomainPage,
  PublicUrlPage,
  PublicUrlRecord,
} from './public-url-types.js';
import type { ListQuery, RequestOptions } from './types.js';

/**
 * `client.publicUrl`: public URLs that `svc-gateway tunnel PORT` connects a local port to, and
 * their custom domains (docs/public-url.md).
 */
export class PublicUrlApi {
  constructor(private readonly call: Requester) {}

  /** Reserve a URL (a subdomain you hold already comes back renewed). */
  create(body: CreatePublicUrlRequest = {}, opts: RequestOptions = {}): Promise<PublicUrlRecord> {
    return this.call('POST', '/v1/public-url', { ...opts, body });
  }

  /** A URL without an account: sent without the key; `token` connects it and is shown once. */
  anonymous(body: AnonymousPublicUrlRequest = {}, opts: RequestOptions = {}): Promise<AnonymousPublicUrl> {
    return this.call('POST', '/v1/public-url/anonymous', { ...opts, body, auth: false });
  }

  get(urlId: string, opts: RequestOptions = {}): Promise<PublicUrlRecord> {
    return this.call('GET', `/v1/public-url/${seg(urlId)}`, opts);
  }

  list(query: ListQuery = {}, opts: RequestOptions = {}): Promise<PublicUrlPage> {
    return this.call('GET', '/v1/public-url', { ...opts, query: pageQuery(query) });
  }

  iterate(opts: RequestOptions = {}): AsyncIterableIterator<PublicUrlRecord> {
    return paginate((cursor) => this.list({ cursor }, opts));
  }

  /** Take an anonymous URL into the key's account. */
  claim(urlId: string, opts: RequestOptions = {}): Promise<PublicUrlRecord> {
    return this.call('POST', `/v1/public-url/${seg(urlId)}/claim`, opts);
  }

  /** Bind a custom domain: publish the records it returns, then `verifyDomain`. */
  createDomain(body: CreateDomainRequest, opts: RequestOptions = {}): Promise<PublicUrlDomain> {
    return this.call('POST', '/v1/public-url/domains', { ...opts, body });
  }

  getDomain(domainId: string, opts: RequestOptions = {}): Promise<PublicUrlDomain> {
    return this.call('GET', `/v1/public-url/domains/${seg(domainId)}`, opts);
  }

  listDomains(query: ListQuery = {}, opts: RequestOptions = {}): Promise<PublicUrlDomainPage> {
    return this.call('GET', '/v1/public-url/domains', { ...opts, query: pageQuery(query) });
  }

  verifyDomain(domainId: string, opts: RequestOptions = {}): Promise<PublicUrlDomain> {
    return this.call('POST', `/v1/public-url/domains/${seg(domainId)}/verify`, opts);
  }
}
