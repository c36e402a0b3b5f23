import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import {
  apiError,
  EMAIL_CAPABILITIES,
  idempotentTransaction,
  iso,
  microsToUsd,
  newId,
  type EmailAddress,
  type EmailRawOutput,
  type EmailSendInput,
  type OutboxKind,
  type OutboxRecord,
  type Svc,
} from '../../core/kit/area.js';
import { normalAddress } from './address.js';
import { checkEnvelope } from './compose.js';
import type { EmailConfigT } from './config.js';
import type { DomainStore } from './domains.js';
import type { EmailListQueryT, EmailRecordT, SendBodyT } from './schemas.js';
import type { SuppressionStore } from './suppressions.js';
import type { EmailTemplates } from './templates.js';

/** What an email record keeps beside the outbox's own fields (the message itself is the send's input). */
export interface EmailData {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  message_id: string;
  /** The vendor's reason given with a bounce or complaint event. */
  event_detail?: string;
}

export type EmailBox = OutboxKind<EmailData, EmailSendInput>;

const show = (a: EmailAddress) => (a.name ? `${a.name} <${a.address}>` : a.address);

/** Accepting a send into the outbox (whose job sends it through the router) and reading records back. */
export class EmailService {
  constructor(
    private readonly svc: Svc,
    private readonly cfg: EmailConfigT,
    private readonly box: EmailBox,
    private readonly domains: DomainStore,
    private readonly suppressions: SuppressionStore,
    private readonly templates: EmailTemplates
  ) {}

  /** Whether a vendor instance keeps messages here instead of sending them (the capture vendor). */
  captured(vendor: string | null): boolean {
    return !!vendor && this.svc.vendors.get(vendor)?.adapter === 'capture';
  }

  wire = (r: OutboxRecord<EmailData>): EmailRecordT => ({
    id: r.id,
    state: r.state as EmailRecordT['state'],
    from: r.data.from,
    to: r.data.to,
    cc: r.data.cc,
    bcc: r.data.bcc,
    subject: r.data.subject,
    message_id: r.data.message_id,
    vendor: r.vendor,
    vendor_message_id: r.vendorMessageId,
    captured: r.state !== 'queued' && this.captured(r.vendor),
    cost_usd: microsToUsd(r.costMicros),
    error: r.error,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  });

  /**
   * POST /v1/email/send: everything checked and the message built before anything is written;
   * then, with the idempotent answer, the outbox record (its hold and its send job) in one
   * transaction. Every recipient suppressed: the record is `suppressed` from the start.
   */
  async send(req: FastifyRequest, reply: FastifyReply, b: SendBodyT): Promise<EmailRecordT> {
    const accountId = req.principal!.accountId;
    const env = checkEnvelope(b, this.cfg);
    if (b.vendor && !this.svc.vendors.configured(EMAIL_CAPABILITIES['email.send'].name).some((i) => i.id === b.vendor))
      throw apiError('validation_failed', `vendor "${b.vendor}" does not send email on this gateway.`, {
        param: 'vendor',
      });
    // `from` must be on a domain the account verified; the operator's default sender needs none.
    const dkim = b.from ? await this.domains.signer(accountId, env.from.domain) : undefined;
    if (b.from && !dkim)
      throw apiError(
        'domain_not_verified',
        `${env.from.domain} is not a verified domain of this account: verify it with POST /v1/email/domains/verify, `
          + 'or leave from out to send from the default sender.',
        { param: 'from' }
      );
    const parts = await this.content(accountId, b);
    const emailId = newId('em');
    const input: EmailSendInput = {
      message_id: `<${emailId}@${env.from.domain}>`,
      idempotency_key: emailId,
      from: { address: env.from.address, ...(env.from.name ? { name: env.from.name } : {}) },
      to: env.to,
      cc: env.cc,
      bcc: env.bcc,
      ...(env.reply_to ? { reply_to: env.reply_to } : {}),
      ...parts,
      attachments: env.attachments,
      headers: {},
      ...(dkim ? { dkim } : {}),
    };
    const data: EmailData = {
      from: show(input.from),
      to: env.to.map(show),
      cc: env.cc.map(show),
      bcc: env.bcc.map(show),
      subject: input.subject,
      message_id: input.message_id,
    };
    return idempotentTransaction(this.svc, req, reply, async (trx) => {
      // Suppressed recipients are left out of the message; with none left it is not sent (nor charged).
      const blocked = await this.blocked(accountId, input, trx);
      const keep = (l: EmailAddress[]) => l.filter((a) => !blocked.has(normalAddress(a.address)));
      const message = { ...input, to: keep(input.to), cc: keep(input.cc), bcc: keep(input.bcc) };
      // Every recipient suppressed: recorded as `suppressed` from the start, with no hold, job or vendor.
      if (!(message.to.length + message.cc.length + message.bcc.length)) {
        const unsent = await this.box.recordUnsent(trx, {
          accountId,
          id: emailId,
          data,
          state: 'suppressed',
          error: { code: 'suppressed', message: 'Every recipient is on the suppression list.' },
        });
        return this.wire(unsent.record);
      }
      const { record } = await this.box.accept(trx, {
        accountId,
        id: emailId,
        input: message,
        data,
        ...(b.vendor ? { vendor: b.vendor } : {}),
        region: req.principal!.region,
      });
      return this.wire(record);
    });
  }

  private async blocked(accountId: string, input: EmailSendInput, trx: Kysely<any>): Promise<Set<string>> {
    const all = [...input.to, ...input.cc, ...input.bcc].map((a) => normalAddress(a.address));
    return this.suppressions.which(accountId, all, trx);
  }

  /** The subject and body parts: from the template, or as given; the text part derived from HTML when missing. */
  private async content(accountId: string, b: SendBodyT): Promise<{ subject: string; text?: string; html?: string }> {
    if (b.template_id) {
      if (b.text !== undefined || b.html !== undefined)
        throw apiError('invalid_request', 'Send template_id or text/html, not both.', { param: 'template_id' });
      const t = await this.templates.get(accountId, b.template_id);
      const subject = b.subject ?? t.subject;
      return this.templates.render(
        accountId,
        { subject, ...(t.html != null ? { html: t.html } : {}), ...(t.text != null ? { text: t.text } : {}) },
        b.template_vars ?? {}
      );
    }
    if (b.template_vars)
      throw apiError('invalid_request', 'template_vars needs a template_id.', { param: 'template_vars' });
    if (b.subject === undefined) throw apiError('validation_failed', 'subject is required.', { param: 'subject' });
    if (b.text === undefined && b.html === undefined)
      throw apiError('validation_failed', 'Send text, html or a template_id.', { param: 'text' });
    if (b.text !== undefined)
      return { subject: b.subject, text: b.text, ...(b.html !== undefined ? { html: b.html } : {}) };
    // Only HTML: the text alternative comes from it, off the event loop (a large page takes a while).
    return this.templates.render(accountId, { subject: b.subject, html: b.html! }, {});
  }

  async get(accountId: string, id: string): Promise<EmailRecordT> {
    return this.wire(await this.box.get(accountId, id));
  }

  async list(accountId: string, q: EmailListQueryT) {
    const page = await this.box.list(accountId, { state: q.state, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map(this.wire), next_cursor: page.next_cursor };
  }

  /** The RFC 5322 copy the capture vendor kept of a message. */
  async raw(accountId: string, id: string): Promise<string> {
    const rec = await this.box.get(accountId, id);
    if (rec.state === 'queued' || !this.captured(rec.vendor))
      throw apiError(
        'not_found',
        rec.state === 'queued'
          ? `Email ${id} has not been captured yet; its state is queued.`
          : `Email ${id} was not captured on this gateway (vendor ${rec.vendor ?? 'none'}): only the capture vendor `
              + 'keeps a copy.',
        { param: 'id' }
      );
    const r = await this.svc.router.call<{ message_id: string }, EmailRawOutput>(
      'email.raw',
      { message_id: rec.data.message_id },
      { accountId, vendor: rec.vendor!, charge: false }
    );
    if (r.output.raw === null)
      throw apiError('not_found', `The captured copy of email ${id} is gone.`, { param: 'id' });
    return r.output.raw;
  }
}
