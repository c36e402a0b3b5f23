import { pageQuery, seg, type Requester } from './call.js';
import type { EmailTemplate, EmailTemplatePage, EmailTemplateRequest } from './email-types.js';
import { paginate } from './paginate.js';
import type { ListQuery, OkResponse, RequestOptions } from './types.js';

/** `client.email.templates`: mustache templates a send names with `template_id` and fills with `template_vars`. */
export class EmailTemplatesApi {
  constructor(private readonly call: Requester) {}

  create(body: EmailTemplateRequest, opts: RequestOptions = {}): Promise<EmailTemplate> {
    return this.call('POST', '/v1/email/templates', { ...opts, body });
  }

  /** One page of the templates, newest first. */
  list(query: ListQuery = {}, opts: RequestOptions = {}): Promise<EmailTemplatePage> {
    return this.call('GET', '/v1/email/templates', { ...opts, query: pageQuery(query) });
  }

  iterate(query: Omit<ListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<EmailTemplate> {
    return paginate((cursor) => this.list({ ...query, cursor }, opts));
  }

  get(templateId: string, opts: RequestOptions = {}): Promise<EmailTemplate> {
    return this.call('GET', `/v1/email/templates/${seg(templateId)}`, opts);
  }

  /** Replace the template as a whole (the body is the same as `create`'s). */
  update(templateId: string, body: EmailTemplateRequest, opts: RequestOptions = {}): Promise<EmailTemplate> {
    return this.call('PUT', `/v1/email/templates/${seg(templateId)}`, { ...opts, body });
  }

  delete(templateId: string, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('DELETE', `/v1/email/templates/${seg(templateId)}`, opts);
  }
}
