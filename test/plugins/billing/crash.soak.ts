import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openDatabase } from '../../../core/db/open.js';
import { freshDatabaseUrl, PG_URL } from '../../helpers/app.js';
import { startGateway } from '../../helpers/gateway-process.js';
import { until } from '../../helpers/wait.js';
import { stripeFake, STRIPE_KEY } from '../../fakes/stripe-fake.js';

// Issue 32, billing: kill -9 of the gateway while charges and refunds are in flight at Stripe
// (the loopback fake, which keeps every PaymentIntent and Refund and answers each after
// LATENCY_MS), then a restart on the same database, with Stripe having forgotten the refunds'
// idempotency keys meanwhile (as after 24 h). Every order is asked again under its keys. After:
// each charge exists once at Stripe and once in the gateway, each refund once at Stripe (a re-send
// finds it by metadata), amount_refunded is the sum of the charge's refunds at Stripe, none is
// left pending, and the wallet is untouched (charges move money at the vendor, not in it).
const ORDERS = Number(process.env.SVC_SOAK_ORDERS ?? 200);
const KILL_AT = Number(process.env.SVC_SOAK_KILL_AT ?? 0.4);
/** Each order: a charge of AMOUNT, then REFUNDS refunds of PART at once. */
const AMOUNT = 1000;
const REFUNDS = 3;
const PART = 250;
const CLIENTS = 16;
const LATENCY_MS = 20;
t.setTimeout(600_000);

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

type Answer = { status: number; body: any };

async function post(base: string, key: string, path: string, body: Record<string, unknown>): Promise<Answer> {
  try {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  } catch {
    return { status: 0, body: undefined }; // the gateway died under the request
  }
}

/**
 * Asked again under its key until a final answer: 409 and 5xx are not. A claim the killed gateway
 * held in a vendor call stays leased until that call's deadline had passed: minutes at most.
 */
async function answered(base: string, key: string, path: string, body: Record<string, unknown>) {
  let got: Answer = { status: 0, body: undefined };
  await until(
    `${body.idempotency_key} answered`,
    async () => {
      got = await post(base, key, path, body);
      return got.status !== 0 && got.status !== 409 && got.status < 500;
    },
    180_000
  ).catch((e) => {
    throw new Error(`${e.message}: last ${got.status} ${JSON.stringify(got.body)}`);
  });
  return got;
}

const chargeBody = (n: number) => ({
  amount: AMOUNT,
  currency: 'USD',
  payment_method_id: 'pm_card_visa',
  idempotency_key: `soak-ch-${n}`,
});
const refundBody = (chargeId: string, n: number, j: number) => ({
  charge_id: chargeId,
  amount: PART,
  idempotency_key: `soak-re-${n}-${j}`,
});

t.test(`kill -9 with ${ORDERS} charges and ${ORDERS * REFUNDS} refunds in flight: each once`, async (t) => {
  const began = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'svc-billing-soak-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbUrl = await freshDatabaseUrl(t, dir);
  const fake = await stripeFake(t, { latencyMs: LATENCY_MS });
  // One port for both runs: the charge's return_url (public_url) is among the parameters a
  // re-sent PaymentIntent must repeat, as a real gateway's fixed public URL makes it.
  const config = {
    server: { host: '127.0.0.1', port: await freePort() },
    data_dir: dir,
    database: { url: dbUrl },
    egress: { allow_private: true },
    jobs: { poll_ms: 20, lease_ms: 3000 },
    limits: { idempotency_lease_seconds: 1, activate_per_hour: 1000 },
    tiers: { free: { rate_per_minute: 100_000_000, burst: 10_000_000, price_usd: 0 } },
    plugins: { billing: { lookup_seconds: [1] } },
    vendors: [{ id: 'stripe', use: 'stripe', config: { secret_key: STRIPE_KEY, base_url: fake.url } }],
  };
  const a = await startGateway(t, dir, config, 'gateway');
  const act = await (
    await fetch(`${a.url}/v1/activate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  ).json();
  const key: string = act.primary_api_key;
  const balance = async (base: string) =>
    (await (await fetch(`${base}/v1/account/balance`, { headers: { authorization: `Bearer ${key}` } })).json())
      .balance_usd;
  const credit = await balance(a.url);

  const creates = () => fake.intents.size + fake.refunds.length;
  const killAt = Math.max(1, Math.floor(KILL_AT * ORDERS * (1 + REFUNDS)));
  let killedAt = 0;
  let heldAtKill = 0;
  fake.onKept(() => {
    if (killedAt || creates() < killAt || fake.held() < 2) return;
    killedAt = creates();
    heldAtKill = fake.held();
    a.proc.kill('SIGKILL');
  });
  let next = 0;
  let answeredBefore = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < ORDERS && !killedAt) {
        const n = next++;
        const c = await post(a.url, key, '/v1/billing/charges', chargeBody(n));
        if (c.status !== 200) continue;
        answeredBefore++;
        const rs = await Promise.all(
          Array.from({ length: REFUNDS }, (_, j) =>
            post(a.url, key, '/v1/billing/refunds', refundBody(c.body.charge_id, n, j))
          )
        );
        answeredBefore += rs.filter((r) => r.status === 200).length;
      }
    })
  );
  await until('the kill', () => killedAt > 0, 120_000);
  t.equal(await a.exited, null, 'the gateway was killed -9');
  const sentBefore = next;
  // Stripe forgot the refunds' keys meanwhile: a re-sent refund must be found by its metadata.
  fake.forgetKeys('/v1/refunds');

  const b = await startGateway(t, dir, config, 'gateway-restarted');
  const charges = new Map<number, any>();
  let i = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (i < ORDERS) {
        const n = i++;
        const c = await answered(b.url, key, '/v1/billing/charges', chargeBody(n)).catch((e) => {
          throw new Error(`${e.message}\n${b.output().slice(-3000)}`);
        });
        t.equal(c.status, 200, `charge ${n}: ${c.status === 200 ? '' : JSON.stringify(c.body)}`);
        charges.set(n, c.body);
        const rs = await Promise.all(
          Array.from({ length: REFUNDS }, (_, j) =>
            answered(b.url, key, '/v1/billing/refunds', refundBody(c.body.charge_id, n, j)).catch((e) => {
              throw new Error(`${e.message}\n${b.output().slice(-3000)}`);
            })
          )
        );
        for (const r of rs) if (r.status !== 200) t.fail(`refund of order ${n}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    })
  );
  const peek = await openDatabase(dbUrl);
  t.teardown(() => peek.close());
  await until(
    'no refund pending',
    async () =>
      (await peek.db.selectFrom('billing_refunds').select('refund_id').where('state', '=', 'pending').execute()).length
      === 0,
    120_000
  );
  const elapsed = Math.round((performance.now() - began) / 1000);

  const rows = await peek.db.selectFrom('billing_charges').selectAll().execute();
  const refunds = await peek.db.selectFrom('billing_refunds').selectAll().execute();
  const intents = [...fake.intents.values()];
  t.equal(rows.length, ORDERS, 'one charge an order in the gateway');
  t.equal(intents.length, ORDERS, 'one PaymentIntent an order at Stripe');
  t.equal(new Set(intents.map((pi) => pi.metadata.charge_id)).size, ORDERS, 'no charge twice at Stripe');
  t.same(
    rows.filter((r) => fake.intents.get(r.vendor_ref)?.metadata.charge_id !== r.charge_id).map((r) => r.charge_id),
    [],
    'each charge names the PaymentIntent made for it'
  );
  t.equal(refunds.length, ORDERS * REFUNDS, 'one refund a request in the gateway');
  t.equal(fake.refunds.length, ORDERS * REFUNDS, 'one Refund a request at Stripe');
  t.equal(new Set(fake.refunds.map((r) => r.metadata.refund_id)).size, fake.refunds.length, 'no refund twice');
  t.same(
    refunds.filter((r) => r.state !== 'succeeded').map((r) => [r.refund_id, r.state, r.failure_code]),
    [],
    'every refund succeeded'
  );
  const atStripe = new Map<string, number>();
  for (const r of fake.refunds) atStripe.set(r.payment_intent, (atStripe.get(r.payment_intent) ?? 0) + r.amount);
  t.same(
    rows
      .filter(
        (r) =>
          Number(r.amount_refunded) !== REFUNDS * PART
          || atStripe.get(r.vendor_ref) !== REFUNDS * PART
          || r.state !== 'partially_refunded'
      )
      .map((r) => [r.charge_id, r.state, Number(r.amount_refunded), atStripe.get(r.vendor_ref)]),
    [],
    "amount_refunded is each charge's refunds at Stripe, exactly"
  );
  t.equal(await balance(b.url), credit, 'the wallet is untouched');
  const listed = fake.calls.filter((c) => c.method === 'GET' && c.path === '/v1/refunds').length;
  t.comment(
    `${PG_URL ? 'PostgreSQL' : 'SQLite'}: ${ORDERS} orders; killed -9 when the fake had kept ${killedAt} creates, `
      + `${heldAtKill} unanswered; ${answeredBefore} requests answered before, ${sentBefore} orders begun; `
      + `refund lists read after the restart: ${listed}; ${elapsed} s`
  );
});
