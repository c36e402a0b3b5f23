import type { EmailEventUpdate } from '../../core/kit/vendor.js';

// The body of a Resend webhook (resend.com/docs/dashboard/webhooks/event-types), already
// verified: `{type, created_at, data: {email_id, to, bounce?: {type, subType, message}}}`.

interface ResendEvent {
  type?: unknown;
  data?: {
    email_id?: unknown;
    to?: unknown;
    bounce?: { type?: unknown; subType?: unknown; message?: unknown };
  };
}

/** The address alone of `Name <user@domain>`, should an event name a recipient as it was sent. */
const bare = (a: string) => a.match(/<([^<>]+)>\s*$/)?.[1] ?? a;

const STATES: Record<string, EmailEventUpdate['state']> = {
  'email.delivered': 'delivered',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
};

/**
 * What a Resend event says happened: delivered, bounced (permanent only for Resend's
 * `Permanent` bounces; `Transient` and `Undetermined` ones move nothing) or complained. Every
 * other type (sent, opened, clicked, delivery_delayed…) is no update.
 */
export function resendEvents(body: string): EmailEventUpdate[] {
  let event: ResendEvent;
  try {
    event = JSON.parse(body) as ResendEvent;
  } catch {
    return [];
  }
  const state = typeof event?.type === 'string' ? STATES[event.type] : undefined;
  const id = event?.data?.email_id;
  if (!state || typeof id !== 'string' || !id) return [];
  const to = event.data?.to;
  const recipients = (Array.isArray(to) ? to : [to]).filter((a): a is string => typeof a === 'string').map(bare);
  const update: EmailEventUpdate = { vendor_message_id: id, state, recipients };
  if (state === 'bounced') {
    const bounce = event.data?.bounce ?? {};
    update.permanent = bounce.type === 'Permanent';
    const kind = [bounce.type, bounce.subType].filter((x) => typeof x === 'string').join('/');
    const detail = [kind, typeof bounce.message === 'string' ? bounce.message : ''].filter(Boolean).join(': ');
    if (detail) update.detail = detail;
  }
  return [update];
}
