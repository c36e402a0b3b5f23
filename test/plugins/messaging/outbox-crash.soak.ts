import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../core/db/open.js';
import { freshDatabaseUrl, PG_URL } from '../../helpers/app.js';
import { startGateway } from '../../helpers/gateway-process.js';
import { until } from '../../helpers/wait.js';
import {
  anyIn,
  EMAIL_MICROS,
  groupBy,
  marker,
  messagingConfig,
  messagingFakes,
  send,
  sendUntilAnswered,
  SMS_MICROS,
  type Send,
} from './messaging-gateway.js';

// Issue "Email and SMS areas": kill -9 of the gateway while emails and SMS are in flight at
// Resend and Twilio (fakes that keep every message), then a restart on the same database.
// Every accepted record ends `sent`, each message reached its vendor exactly once (Resend
// de-duplicates a resend by its Idempotency-Key, the record id; Twilio's list is read through
// `sms.find` before anything is resent), none ends `outcome_unknown`, and the account is
// charged once a message. The kill lands inside a vendor call: when a fake keeps the message
// that takes it to SVC_SOAK_KILL_AT of all, before that message is answered.
const EMAILS = Number(process.env.SVC_SOAK_EMAILS ?? 2000);
const SMS = Number(process.env.SVC_SOAK_SMS ?? 2000);
const KILL_AT = Number(process.env.SVC_SOAK_KILL_AT ?? 0.3);
/** Sends the client has open at once, before the kill and after the restart. */
const CLIENTS = 24;
/** How long a fake takes to answer a send it kept: the window in which the kill finds them. */
const LATENCY_MS = 20;
t.setTimeout(300_000);

t.test(`kill -9 with ${EMAILS} emails and ${SMS} SMS in flight: each sent once, charged once`, async (t) => {
  const began = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'svc-outbox-soak-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbUrl = await freshDatabaseUrl(t, dir);
  const fakes = await messagingFakes(t, LATENCY_MS);
  const creditUsd = Math.ceil((EMAILS * EMAIL_MICROS + SMS * SMS_MICROS) / 1e6) + 1;
  const config = messagingConfig(dir, dbUrl, fakes, creditUsd);
  const a = await startGateway(t, dir, config, 'gateway');
  const act = await (
    await fetch(`${a.url}/v1/activate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  ).json();
  const key: string = act.primary_api_key;

  const sends: Send[] = [];
  for (let n = 0; n < Math.max(EMAILS, SMS); n++) {
    if (n < EMAILS) sends.push({ kind: 'email', n });
    if (n < SMS) sends.push({ kind: 'sms', n });
  }
  const killAt = Math.max(1, Math.floor(KILL_AT * sends.length));
  let killedAt = 0;
  let heldAtKill = { ...fakes.held };
  let keptAtKill = [0, 0];
  // Only while both vendors hold a send unanswered: a resend Resend de-duplicates, and a
  // message Twilio's list must show, are both on the path after the restart.
  fakes.onMessage(() => {
    if (killedAt || fakes.count() < killAt || !fakes.held.resend || !fakes.held.twilio) return;
    killedAt = fakes.count();
    heldAtKill = { ...fakes.held };
    keptAtKill = [fakes.resend.messages.length, fakes.twilio.messages.length];
    a.proc.kill('SIGKILL');
  });
  const ids = new Map<string, string>();
  const pending: Send[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < sends.length && !killedAt) {
        const s = sends[next++];
        const id = await send(a.url, key, s);
        if (id) ids.set(marker(s), id);
        else pending.push(s);
      }
    })
  );
  await until('the kill', () => killedAt > 0, 120_000);
  t.equal(await a.exited, null, 'the gateway was killed -9');
  const answered = ids.size;
  pending.push(...sends.slice(next));
  const peek = await openDatabase(dbUrl);
  t.teardown(() => peek.close());
  const open = await peek.db
    .selectFrom('outbox_records')
    .select(['kind', (eb) => eb.fn.countAll().as('n')])
    .where('state', '=', 'queued')
    .where('attempt_open', 'is not', null)
    .groupBy('kind')
    .execute();
  const openOf = (kind: string) => Number(open.find((r) => r.kind === kind)?.n ?? 0);
  const atKill = { messages: killedAt, answered, sent: next, email: openOf('email'), sms: openOf('sms') };
  t.ok(atKill.email >= heldAtKill.resend && atKill.sms >= heldAtKill.twilio, 'the held sends left attempts open');

  const b = await startGateway(t, dir, config, 'gateway-restarted');
  let i = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (i < pending.length) {
        const s = pending[i++];
        ids.set(marker(s), await sendUntilAnswered(b.url, key, s));
      }
    })
  );
  await until(
    'every record final',
    async () => !(await anyIn(b.url, key, 'email', 'queued')) && !(await anyIn(b.url, key, 'sms', 'queued')),
    120_000
  );
  const elapsed = Math.round((performance.now() - began) / 1000);

  t.equal(ids.size, sends.length, 'every send answered');
  t.equal(new Set(ids.values()).size, sends.length, 'a record a send: a retried key names its first record');
  const rows = await peek.db
    .selectFrom('outbox_records')
    .select(['record_id', 'kind', 'state', 'vendor_message_id', 'error_code', 'cost_micros'])
    .where('account_id', '=', act.account_id)
    .execute();
  const byId = new Map(rows.map((r) => [r.record_id as string, r]));
  t.equal(rows.length, sends.length, 'no record but the answered ones');
  const notSent = rows.filter((r) => r.state !== 'sent');
  t.same(
    notSent.slice(0, 5).map((r) => [r.record_id, r.state, r.error_code]),
    [],
    `every record sent (${notSent.length} not)`
  );
  t.equal(rows.filter((r) => r.error_code === 'outcome_unknown').length, 0, 'none outcome_unknown');

  // Resend: one message an Idempotency-Key (the record id); the record names that message.
  const byKey = groupBy(
    fakes.resend.messages,
    (m) => m.idempotencyKey!,
    (m) => m.id
  );
  const emailIds = sends.filter((s) => s.kind === 'email').map((s) => ids.get(marker(s))!);
  t.equal(fakes.resend.messages.length, EMAILS, 'Resend kept one message an email');
  t.same(
    emailIds.filter((id) => byKey.get(id)?.length !== 1),
    [],
    'Resend saw each email once, none twice'
  );
  t.same(
    emailIds.filter((id) => byId.get(id)?.vendor_message_id !== byKey.get(id)?.[0]),
    [],
    'each email record names the message Resend kept for it'
  );

  // Twilio: one message a body (its marker); the record names that message's sid.
  const byBody = groupBy(
    fakes.twilio.messages,
    (m) => m.body,
    (m) => m.sid
  );
  const smsSends = sends.filter((s) => s.kind === 'sms');
  t.equal(fakes.twilio.messages.length, SMS, 'Twilio kept one message an SMS');
  t.equal(fakes.twilio.duplicates(), 0, 'Twilio saw no body twice');
  t.same(smsSends.filter((s) => byBody.get(marker(s))?.length !== 1).map(marker), [], 'Twilio saw each SMS once');
  t.same(
    smsSends.filter((s) => byId.get(ids.get(marker(s))!)?.vendor_message_id !== byBody.get(marker(s))?.[0]).map(marker),
    [],
    'each SMS record names the message Twilio kept for it'
  );

  // The wallet: one usage entry a record, of its price; no hold left; the balance to the micro.
  const usage = await peek.db
    .selectFrom('wallet_ledger')
    .select(['ref', 'amount_micros'])
    .where('account_id', '=', act.account_id)
    .where('kind', '=', 'usage')
    .execute();
  const charged = groupBy(
    usage,
    (u) => u.ref as string,
    (u) => Number(u.amount_micros)
  );
  const price = (id: string) => (byId.get(id)?.kind === 'email' ? EMAIL_MICROS : SMS_MICROS);
  t.equal(usage.length, sends.length, 'one usage entry a message');
  t.same(
    [...ids.values()].filter((id) => charged.get(id)?.length !== 1 || charged.get(id)![0] !== -price(id)),
    [],
    'each record charged once, its price'
  );
  const holds = await peek.db
    .selectFrom('wallet_holds')
    .select('hold_id')
    .where('account_id', '=', act.account_id)
    .execute();
  t.equal(holds.length, 0, 'no hold left');
  const bal = await (
    await fetch(`${b.url}/v1/account/balance`, { headers: { authorization: `Bearer ${key}` } })
  ).json();
  t.equal(
    Math.round(bal.balance_usd * 1e6),
    creditUsd * 1e6 - EMAILS * EMAIL_MICROS - SMS * SMS_MICROS,
    'the balance: the credit less each message once'
  );
  const replays = fakes.resend.requests() - fakes.resend.messages.length;
  t.ok(replays >= heldAtKill.resend, 'each email Resend held was sent again and answered from its key');
  t.ok(fakes.twilio.lists.length >= heldAtKill.twilio, "each SMS Twilio held was looked up in Twilio's list");
  t.comment(
    `${PG_URL ? 'PostgreSQL' : 'SQLite'}: ${sends.length} messages; killed -9 when the fakes had kept `
      + `${atKill.messages} (Resend ${keptAtKill[0]}, Twilio ${keptAtKill[1]}), holding ${heldAtKill.resend} + `
      + `${heldAtKill.twilio} unanswered; ${atKill.answered} of ${atKill.sent} sends answered, attempts open: `
      + `${atKill.email} emails, ${atKill.sms} SMS; ${pending.length} sends asked again; `
      + `Resend replayed ${replays} keys, Twilio's list read ${fakes.twilio.lists.length} times; duplicates: 0 expected, Resend ${fakes.resend.messages.length - byKey.size}, `
      + `Twilio ${fakes.twilio.duplicates()}; ${elapsed} s`
  );
});
