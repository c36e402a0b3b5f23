import {
  joinUrl,
  sendFailure,
  smsSegments,
  VendorFailure,
  type SmsFindInput,
  type SmsSendOutput,
} from '../../core/kit/vendor.js';
import { twilioFailure, type TwilioMessage, type TwilioMessagePage } from './wire.js';

// `sms.find` on Twilio: the messages to the number (from the sender, when the send named one),
// `GET …/Messages.json?To=…&From=…`, newest first, page after page (`next_page_uri`); the one the
// send made has its to, from and body and was created after the attempt started (a minute allowed
// for the clocks). No `DateSent>` filter: a message Twilio still holds as queued has no date sent
// and would be left out by it, and resent. Twilio sorts by date sent, newest first, so the pages
// end being read at the first message sent before the attempt (every later one was too).

/** Clocks of the gateway and Twilio may differ by this much. */
const SKEW_MS = 60_000;
/** Pages read at most: the messages from one sender to one number since the attempt, 100 a page. */
const MAX_PAGES = 20;

export interface TwilioHttp {
  /** `…/Accounts/{sid}/Messages.json`. */
  url: string;
  baseUrl: string;
  authorization: string;
  fetch: typeof fetch;
  /** The instance's default sender. */
  from?: string;
}

/** What a send answers, from a Message resource: its sid and Twilio's segment count. */
export function sendOutput(msg: TwilioMessage, body: string): SmsSendOutput {
  const counted = Number(msg.num_segments);
  const segments = Number.isInteger(counted) && counted > 0 ? counted : smsSegments(body).segments;
  return { vendor_message_id: msg.sid, segments };
}

async function page(http: TwilioHttp, url: string, signal: AbortSignal): Promise<TwilioMessagePage> {
  let res: Response;
  try {
    res = await http.fetch(url, { headers: { authorization: http.authorization, accept: 'application/json' }, signal });
  } catch (e) {
    throw sendFailure(e, signal, 'twilio');
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw twilioFailure(res.status, text, res.headers.get('retry-after'));
  try {
    const p = JSON.parse(text) as TwilioMessagePage;
    if (Array.isArray(p.messages)) return p;
  } catch {
    // answered below
  }
  throw new VendorFailure('unavailable', 'twilio answered a message list that is not one');
}

/** The message Twilio took for this send since the attempt started (the earliest such), or null. */
export async function findSent(http: TwilioHttp, input: SmsFindInput, signal: AbortSignal) {
  const { send } = input;
  const from = send.from ?? http.from;
  const after = input.since - SKEW_MS;
  const q = new URLSearchParams({ To: send.to });
  if (from) q.set('From', from);
  q.set('PageSize', '100');
  let next: string | null = `${http.url}?${q}`;
  let found: { msg: TwilioMessage; at: number } | undefined;
  let older = false;
  for (let n = 0; next; n++) {
    if (n === MAX_PAGES)
      throw new VendorFailure('unavailable', `twilio: more than ${MAX_PAGES} pages of messages to ${send.to}`);
    const p = await page(http, next, signal);
    for (const m of p.messages) {
      const at = Date.parse(m.date_created ?? '');
      const same = m.to === send.to && m.body === send.body && (!from || m.from === from);
      const outbound = !m.direction || m.direction.startsWith('outbound');
      if (same && outbound && at >= after && (!found || at < found.at)) found = { msg: m, at };
      if (Date.parse(m.date_sent ?? '') < after) older = true;
    }
    next = p.next_page_uri && !older ? joinUrl(http.baseUrl, p.next_page_uri) : null;
  }
  return found ? sendOutput(found.msg, send.body) : null;
}
