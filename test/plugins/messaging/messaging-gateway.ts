import { setTimeout as delay } from 'node:timers/promises';
import { until } from '../../helpers/wait.js';
import { RESEND_KEY, RESEND_WEBHOOK_SECRET, resendFake } from '../../fakes/resend-fake.js';
import { TWILIO_SID, TWILIO_TOKEN, twilioFake } from '../../fakes/twilio-fake.js';
import type { Tap } from '../../helpers/tap.js';

// The email and SMS areas of a gateway process on the Resend and Twilio fakes, for the outbox's
// crash soak: the config, and a client whose every send carries its own Idempotency-Key, so
// an answer lost with the gateway is asked for again and names the same record.

export const FROM = '+15005550006';
/** What a message costs at the default prices and markup 1: Resend per recipient, Twilio per segment. */
export const EMAIL_MICROS = 900;
export const SMS_MICROS = 8300;

/**
 * Both fakes, each answering a send only after `latencyMs` (the message already kept), and
 * counting the sends each holds meanwhile: kept, not yet answered.
 */
export async function messagingFakes(t: Tap, latencyMs: number) {
  const resend = await resendFake(t);
  const twilio = await twilioFake(t);
  const held = { resend: 0, twilio: 0 };
  let kept: () => void = () => {};
  const hold = (fake: keyof typeof held) => async () => {
    held[fake]++;
    kept();
    await delay(latencyMs);
    held[fake]--;
  };
  resend.beforeAnswer(hold('resend'));
  twilio.beforeAnswer(hold('twilio'));
  return {
    resend,
    twilio,
    held,
    /** Messages either fake kept so far. */
    count: () => resend.messages.length + twilio.messages.length,
    /** Runs `fn` each time a message is kept, before its answer leaves. */
    onMessage: (fn: () => void) => {
      kept = fn;
    },
  };
}

export function messagingConfig(
  dir: string,
  dbUrl: string,
  fakes: Awaited<ReturnType<typeof messagingFakes>>,
  creditUsd: number
) {
  return {
    data_dir: dir,
    database: { url: dbUrl },
    egress: { allow_private: true },
    jobs: { poll_ms: 20, lease_ms: 3000 },
    limits: { idempotency_lease_seconds: 1, activate_per_hour: 1000 },
    wallet: { trial_credit_usd: creditUsd },
    tiers: { free: { rate_per_minute: 100_000_000, burst: 10_000_000, price_usd: 0 } },
    // No delivery reports: the fake posts none, and a record's end here is `sent`.
    plugins: { email: { default_from: 'Soak <soak@example.com>' }, sms: { status_callbacks: false } },
    vendors: [
      {
        id: 'rs',
        use: 'resend',
        config: { api_key: RESEND_KEY, webhook_secret: RESEND_WEBHOOK_SECRET, base_url: fakes.resend.baseUrl },
      },
      {
        id: 'tw',
        use: 'twilio',
        config: { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN, from: FROM, base_url: fakes.twilio.baseUrl },
      },
    ],
  };
}

export type Kind = 'email' | 'sms';
export interface Send {
  kind: Kind;
  n: number;
}

/** The marker a message carries, by which a fake's copy is told from the others. */
export const marker = (s: Send) => `soak ${s.kind} ${s.n}`;

function request(s: Send) {
  if (s.kind === 'email')
    return { path: '/v1/email/send', body: { to: `r${s.n}@example.org`, subject: marker(s), text: 'hello' } };
  const to = `+1415555${String(s.n % 10_000).padStart(4, '0')}`;
  return { path: '/v1/sms/send', body: { to, body: marker(s) } };
}

/** One send under its own key: the record id, or undefined when the answer was lost (the gateway died). */
export async function send(base: string, key: string, s: Send): Promise<string | undefined> {
  const { path, body } = request(s);
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': marker(s) },
    body: JSON.stringify(body),
  }).catch(() => undefined);
  if (!res) return undefined;
  const text = await res.text().catch(() => undefined);
  if (text === undefined) return undefined;
  if (res.status !== 200) throw Object.assign(new Error(`${marker(s)}: ${res.status} ${text}`), { status: res.status });
  const r = JSON.parse(text);
  return s.kind === 'email' ? r.id : r.sms_id;
}

/** The send asked again with its key until answered: 409 while the dead node's claim on the key lasts (1 s). */
export async function sendUntilAnswered(base: string, key: string, s: Send): Promise<string> {
  let id: string | undefined;
  await until(`${marker(s)} answered`, async () => {
    try {
      id = await send(base, key, s);
    } catch (e: any) {
      if (e.status === 409) return false;
      throw e;
    }
    return id !== undefined;
  });
  return id!;
}

/** Records of the account in `state` (at most one page of 1): whether any is left. */
export async function anyIn(base: string, key: string, kind: Kind, state: string): Promise<boolean> {
  const res = await fetch(`${base}/v1/${kind}?state=${state}&limit=1`, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`list ${kind}: ${res.status} ${await res.text()}`);
  return (await res.json()).items.length > 0;
}

/** `items`' values by their key, in order: what a fake kept under each record's key. */
export function groupBy<T, V>(items: T[], key: (x: T) => string, value: (x: T) => V): Map<string, V[]> {
  const out = new Map<string, V[]>();
  for (const x of items) out.set(key(x), [...(out.get(key(x)) ?? []), value(x)]);
  return out;
}
