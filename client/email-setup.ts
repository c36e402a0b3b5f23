import { pageQuery, seg, type Requester } from './call.js';
import type { EmailDomain, EmailDomainList, Suppression, SuppressionPage, SuppressRequest } from './email-types.js';
import { paginate } from './paginate.js';
import type { ListQuery, OkResponse, RequestOptions } from './types.js';

/** `client.email.domains`: the domains a message may be sent from, each with its DKIM key. */
export class EmailDomainsApi {
  constructor(private readonly call: Requester) {}

  /**
   * Add a sending domain (the first call) and check its DKIM, SPF and DMARC records; the answer's
   * `records` are what to publish in DNS, `missing` what this lookup did not find.
   */
  verify(domain: string, opts: RequestOptions = {}): Promise<EmailDomain> {
    return this.call('POST', '/v1/email/domains/verify', { ...opts, body: { domain } });
  }

  list(opts: RequestOptions = {}): Promise<EmailDomainList> {
    return this.call('GET', '/v1/email/domains', opts);
  }

  delete(domain: string, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('DELETE', `/v1/email/domains/${seg(domain)}`, opts);
  }
}

/** `client.email.suppressions`: addresses no message is sent to (bounces and complaints land here too). */
export class EmailSuppressionsApi {
  constructor(private readonly call: Requester) {}

  add(body: SuppressRequest, opts: RequestOptions = {}): Promise<Suppression> {
    return this.call('POST', '/v1/email/suppress', { ...opts, body });
  }

  /** One page of the list, newest first. */
  list(query: ListQuery = {}, opts: RequestOptions = {}): Promise<SuppressionPage> {
    return this.call('GET', '/v1/email/suppress', { ...opts, query: pageQuery(query) });
  }

  iterate(query: Omit<ListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<Suppression> {
    return paginate((cursor) => this.list({ ...query, cursor }, opts));
  }

  delete(email: string, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('DELETE', `/v1/email/suppress/${seg(email)}`, opts);
  }
}
