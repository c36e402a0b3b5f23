import type { FastifyInstance, InjectOptions } from 'fastify';
import { failStoringAnswers } from './answer-fault.js';

type T = {
  test(name: string, fn: (t: any) => Promise<void>): Promise<void>;
};

export interface ExactlyOnceCase {
  /** The request, with the idempotency key `key` (in its body or header). */
  request: (key: string) => InjectOptions;
  /** The same key on another request (another body, or path). */
  other: (key: string) => InjectOptions;
  /** What the request creates, read from the database: equal before and after a run that created nothing. */
  state: () => Promise<unknown>;
  /** Checks the first answer (its status is 200 already). */
  answered?: (t: any, body: any) => Promise<void> | void;
}

/**
 * Issue 27's three checks for a route that creates something under an idempotency key:
 * a failure between its effect and its stored answer leaves neither (and frees the key); the
 * retry then creates it once, and a replay answers the same without creating it again; the
 * same key on another request is 409 idempotency_key_reused and creates nothing.
 */
export async function checkExactlyOnce(t: T, app: FastifyInstance, c: ExactlyOnceCase): Promise<void> {
  const before = await c.state();
  await t.test('the answer cannot be stored: nothing is created, the key is free again', async (t) => {
    const undo = await failStoringAnswers(app);
    const res = await app.inject(c.request('once-1'));
    await undo();
    t.equal(res.statusCode, 500, res.body);
    t.equal(res.json().error.code, 'internal_error');
    t.same(await c.state(), before, 'the effect rolled back with the answer');
  });
  let first: any;
  let after: unknown;
  await t.test('the retry creates it once; a replay answers the same and creates nothing', async (t) => {
    const res = await app.inject(c.request('once-1'));
    t.equal(res.statusCode, 200, res.body);
    first = res.json();
    await c.answered?.(t, first);
    after = await c.state();
    t.notSame(after, before, 'created');
    const again = await app.inject(c.request('once-1'));
    t.equal(again.statusCode, 200);
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.same(again.json(), first, 'the same answer');
    t.same(await c.state(), after, 'nothing created again');
  });
  await t.test('the same key on another request: 409 idempotency_key_reused, nothing created', async (t) => {
    const res = await app.inject(c.other('once-1'));
    t.equal(res.statusCode, 409, res.body);
    t.equal(res.json().error.code, 'idempotency_key_reused');
    t.same(await c.state(), after, 'nothing created');
  });
}

/**
 * Issue 27's check for a metered route under an idempotency key: a failure between the charge
 * and the stored answer keeps neither (nothing charged, no hold left, the key free again); the
 * retry charges once; its replay answers the same and charges nothing. `request(key)` carries
 * the key; `same` picks what of two answers of one request must be equal (default: all of it).
 */
export async function checkChargedOnce(
  t: T,
  app: FastifyInstance,
  accountId: string,
  request: (key: string) => InjectOptions,
  same: (body: any) => unknown = (b) => b
): Promise<void> {
  const db = app.svc.db;
  const charges = async () =>
    (
      await db
        .selectFrom('wallet_ledger')
        .select('amount_micros')
        .where('account_id', '=', accountId)
        .where('kind', '=', 'usage')
        .execute()
    ).map((r) => Number(r.amount_micros));
  const holds = async () =>
    app.svc.wallet.holdsInMemory(accountId)
    + (await db.selectFrom('wallet_holds').select('hold_id').where('account_id', '=', accountId).execute()).length;
  const before = { balance: await app.svc.wallet.balance(accountId), charges: await charges() };
  await t.test('the answer cannot be stored: nothing charged, no hold left, the key free again', async (t) => {
    const undo = await failStoringAnswers(app);
    const res = await app.inject(request('charged-1'));
    await undo();
    t.equal(res.statusCode, 500, res.body);
    t.same(await charges(), before.charges, 'no charge written');
    t.equal(await app.svc.wallet.balance(accountId), before.balance, 'the balance as before');
    t.equal(await holds(), 0, 'no hold left');
  });
  await t.test('the retry charges once; its replay answers the same and charges nothing', async (t) => {
    const res = await app.inject(request('charged-1'));
    t.equal(res.statusCode, 200, res.body);
    const cost = Math.round(Number(res.headers['x-svc-cost-usd']) * 1e6);
    t.ok(cost > 0, 'the call costs something');
    t.same(await charges(), [...before.charges, -cost], 'one charge, of what the response says');
    const balance = await app.svc.wallet.balance(accountId);
    t.equal(balance, before.balance - cost);
    t.equal(Math.round(Number(res.headers['x-svc-balance-usd']) * 1e6), balance, 'the balance header is exact');
    t.equal(await holds(), 0, 'no hold left');
    const again = await app.inject(request('charged-1'));
    t.equal(again.statusCode, 200);
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.same(same(again.json()), same(res.json()), 'the same answer');
    t.same(await charges(), [...before.charges, -cost], 'no second charge');
  });
}
