import { apiError, fieldError, hasLineBreak, type EmailAttachment, type EmailAddress } from '../../core/kit/area.js';
import { checkAddress } from './address.js';
import type { EmailConfigT } from './config.js';
import type { SendBodyT } from './schemas.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

export interface Envelope {
  from: EmailAddress & { domain: string };
  reply_to?: EmailAddress;
  to: EmailAddress[];
  cc: EmailAddress[];
  bcc: EmailAddress[];
  attachments: EmailAttachment[];
}

function list(v: string | string[] | undefined, param: string): EmailAddress[] {
  const items = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return items.map((a, i) => {
    const { address, name } = checkAddress(a, Array.isArray(v) ? `${param}[${i}]` : param);
    return name ? { address, name } : { address };
  });
}

/**
 * Every address, header field and attachment of a send checked, before anything is written: a
 * bad address, a line break in a header field, a count or a size over its cap is refused whole.
 */
export function checkEnvelope(b: SendBodyT, cfg: EmailConfigT): Envelope {
  const to = list(b.to, 'to');
  const cc = list(b.cc, 'cc');
  const bcc = list(b.bcc, 'bcc');
  const count = to.length + cc.length + bcc.length;
  if (count > cfg.max_recipients)
    throw apiError(
      'payload_too_large',
      `The message has ${count} recipients (to, cc and bcc), over the cap of ${cfg.max_recipients}.`,
      { param: 'to', details: { max_recipients: cfg.max_recipients } }
    );
  if (b.subject !== undefined && hasLineBreak(b.subject))
    throw fieldError('subject', 'contains a line break', 'subject must not contain CR, LF or NUL.');
  const from = checkAddress(b.from ?? cfg.default_from, b.from ? 'from' : 'default_from');
  const reply = b.reply_to ? checkAddress(b.reply_to, 'reply_to') : undefined;
  return {
    from,
    ...(reply ? { reply_to: { address: reply.address, ...(reply.name ? { name: reply.name } : {}) } } : {}),
    to,
    cc,
    bcc,
    attachments: checkAttachments(b.attachments ?? [], cfg),
  };
}

function checkAttachments(items: NonNullable<SendBodyT['attachments']>, cfg: EmailConfigT): EmailAttachment[] {
  if (items.length > cfg.max_attachments)
    throw apiError(
      'payload_too_large',
      `The message has ${items.length} attachments, over the cap of ${cfg.max_attachments}.`,
      { param: 'attachments', details: { max_attachments: cfg.max_attachments } }
    );
  let total = 0;
  return items.map((a, i) => {
    const param = `attachments[${i}]`;
    if (hasLineBreak(a.filename) || /["\\]/.test(a.filename))
      throw fieldError(
        `${param}.filename`,
        'contains a line break, " or \\',
        `${param}.filename must be a plain name.`
      );
    if (a.mime !== undefined && !MIME.test(a.mime))
      throw fieldError(`${param}.mime`, 'is not a media type', `${param}.mime must look like type/subtype.`);
    total += Math.floor((a.content.length * 3) / 4) - (a.content.match(/=+$/)?.[0].length ?? 0);
    // Sized before it is parsed: an 11 MiB attachment is refused without decoding it.
    if (total > cfg.max_attachment_bytes)
      throw apiError(
        'payload_too_large',
        `The attachments decode to more than the cap of ${cfg.max_attachment_bytes} bytes a message.`,
        { param: 'attachments', details: { max_attachment_bytes: cfg.max_attachment_bytes } }
      );
    if (a.content.length % 4 !== 0 || !BASE64.test(a.content))
      throw fieldError(`${param}.content`, 'is not base64', `${param}.content must be base64 (no line breaks).`);
    return { filename: a.filename, content: a.content, content_type: a.mime ?? 'application/octet-stream' };
  });
}
