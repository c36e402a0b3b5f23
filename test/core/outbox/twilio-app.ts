import type { FastifyInstance } from 'fastify';
import { newId } from '../../../core/ids.js';
import type { SmsSendInput } from '../../../core/capabilities/sms.js';
import { TWILIO_SID, TWILIO_TOKEN, twilioFake } from '../../fakes/twilio-fake.js';
import { smsApp } from '../../plugins/sms/sms-app.js';
import { leaveAttemptOpen } from './outbox-app.js';
import type { Tap } from '../../helpers/tap.js';

// The SMS area on the twilio adapter against the fake, for the outbox's crash, refusal and
// early-callback paths, and the records a node that died mid-call leaves.

export const PUBLIC = 'https://gw.example.com';
export const FROM = '+15005550006';

export async function twilioApp(t: Tap) {
  const fake = await twilioFake(t);
  const { app, a, b } = await smsApp(t, {
    jobs: { poll_ms: 20 },
    server: { public_url: PUBLIC },
    vendors: [
      {
        id: 'tw',
        use: 'twilio',
        config: { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN, from: FROM, base_url: fake.baseUrl },
      },
    ],
  });
  const callback = (cb: { url: string; body: string; headers: Record<string, string> }) =>
    app.inject({ method: 'POST', url: new URL(cb.url).pathname, headers: cb.headers, payload: cb.body });
  return { fake, app, a, b, callback };
}

/** What the area hands sms.send for a message (the record id is its idempotency key). */
export function smsInput(to: string, body: string): SmsSendInput {
  return { to, body, from: FROM, idempotency_key: newId('sms'), status_callback_url: `${PUBLIC}/v1/sms/status` };
}

/** Sends `input` through the twilio instance itself, as the job would have before its node died. */
export function sendDirect(app: FastifyInstance, input: SmsSendInput) {
  const impl = app.svc.vendors.get('tw')!.instance.capabilities['sms.send']!;
  return impl.invoke(input, { signal: new AbortController().signal, deadline: Date.now() + 30_000 });
}

/**
 * A record accepted with its attempt recorded at `at` and no outcome: what a node that died
 * between the vendor call and its outcome leaves (the job then finds it open).
 */
export async function crashedMidCall(app: FastifyInstance, accountId: string, input: SmsSendInput, at: number) {
  const box = app.svc.outbox.kind('sms')!;
  return app.svc.db.transaction().execute(async (trx) => {
    const data = { to: input.to, from: input.from ?? null, segments: 1, encoding: 'GSM-7' };
    const { record } = await box.accept(trx, { id: input.idempotency_key, accountId, input, data });
    await leaveAttemptOpen(trx, record.id, ['tw'], at);
    return record.id;
  });
}
