import { seg, type Requester } from './call.js';
import { EmailDomainsApi, EmailSuppressionsApi } from './email-setup.js';
import { EmailTemplatesApi } from './email-templates.js';
import type { EmailListQuery, EmailPage, EmailRaw, EmailRecord, SendEmailRequest } from './email-types.js';
import { paginate } from './paginate.js';
import type { RequestOptions } from './types.js';

/**
 * `client.email`: send and read messages; sending domains, the suppression list and templates
 * under `domains`, `suppressions` and `templates` (docs/email.md).
 */
export class EmailApi {
  readonly domains: EmailDomainsApi;
  readonly suppressions: EmailSuppressionsApi;
  readonly templates: EmailTemplatesApi;

  constructor(private readonly call: Requester) {
    this.domains = new EmailDomainsApi(call);
    this.suppressions = new EmailSuppressionsApi(call);
    this.templates = new EmailTemplatesApi(call);
  }

  /**
   * Accept a message into the outbox: answered `queued`, sent by a job (`get` shows the state).
   * Pass an `idempotencyKey` to retry a send safely: the same key sends the message once.
   */
  send(body: SendEmailRequest, opts: RequestOptions = {}): Promise<EmailRecord> {
    return this.call('POST', '/v1/email/send', { ...opts, body });
  }

  get(id: string, opts: RequestOptions = {}): Promise<EmailRecord> {
    return this.call('GET', `/v1/email/${seg(id)}`, opts);
  }

  /** One page of the account's messages, newest first; `next_cursor` fetches the next. */
  list(query: EmailListQuery = {}, opts: RequestOptions = {}): Promise<EmailPage> {
    const { state, limit, cursor, project_id } = query;
    return this.call('GET', '/v1/email', { ...opts, query: { state, limit, cursor, project_id } });
  }

  /** Every message, page after page: `for await (const m of client.email.iterate({ state: 'sent' })) …`. */
  iterate(query: Omit<EmailListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<EmailRecord> {
    return paginate((cursor) => this.list({ ...query, cursor }, opts));
  }

  /** The RFC 5322 message as the capture vendor kept it (a gateway without a mail server). */
  raw(id: string, opts: RequestOptions = {}): Promise<EmailRaw> {
    return this.call('GET', `/v1/email/${seg(id)}/raw`, opts);
  }
}
