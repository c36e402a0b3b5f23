import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { activate, type Activated } from '../../helpers/app.js';
import { newId } from '../../../core/ids.js';
import { meterCall, scriptedApp } from '../../helpers/scripted-app.js';

const DAY = 86_400_000;

function usage(app: FastifyInstance, who: Activated, query = '') {
  return app.inject({ method: 'GET', url: `/v1/account/usage${query}`, headers: who.auth });
}

/** A ledger entry at a chosen time (calls through the router are always "now"). */
async function entry(
  app: FastifyInstance,
  accountId: string,
  at: string | number,
  micros: number,
  capability: string | null,
  kind = 'usage'
) {
  await app.svc.db
    .insertInto('wallet_ledger')
    .values({
      entry_id: newId('led'),
      account_id: accountId,
      amount_micros: -micros,
      kind,
      ref: null,
      capability,
      vendor: 'v',
      quantity: null,
      created_at: typeof at === 'number' ? at : Date.parse(at),
    })
    .execute();
}

t.test('usage of real metered calls, by capability and by day', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'v', price_micros: 1_000 },
    { id: 'w', price_micros: 2_500, capabilities: ['test.send'] },
  ]);
  const me = await activate(app);
  const other = await activate(app);
  for (let i = 0; i < 3; i++) t.equal((await meterCall(app, me.auth, { input: `r${i}` })).statusCode, 200);
  for (let i = 0; i < 2; i++)
    t.equal((await meterCall(app, me.auth, { input: `s${i}`, vendor: 'w' }, 'send')).statusCode, 200);
  await meterCall(app, other.auth, { input: 'not mine' });

  const byCap = await usage(app, me, '?group_by=capability');
  t.equal(byCap.statusCode, 200);
  t.same(byCap.json().items, [
    { capability: 'test.run', cost_usd: 0.003, calls: 3 },
    { capability: 'test.send', cost_usd: 0.005, calls: 2 },
  ]);
  t.equal(byCap.json().total_usd, 0.008);

  const byDay = await usage(app, me);
  t.same(byDay.json().items, [{ day: new Date().toISOString().slice(0, 10), cost_usd: 0.008, calls: 5 }]);
  const { from, to } = byDay.json();
  t.ok(Math.abs(Date.parse(to) - Date.now()) < 5_000, 'to defaults to now');
  t.equal(Date.parse(to) - Date.parse(from), 30 * DAY, 'from defaults to 30 days before');
  t.notOk(
    Object.keys(byDay.headers).some((h) => h.startsWith('x-svc-cost')),
    'reading usage is not metered'
  );
});

t.test('days are UTC days; from is inclusive, to exclusive; other kinds and accounts are left out', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'v' }]);
  const me = await activate(app);
  const other = await activate(app);
  await entry(app, me.account_id, '2026-10-01T23:59:59.999Z', 100, 'ai.chat');
  await entry(app, me.account_id, '2026-10-02T00:00:00.000Z', 250, 'ai.chat');
  await entry(app, me.account_id, '2026-10-02T12:00:00.000Z', 1_000_000, 'email.send');
  await entry(app, me.account_id, '2026-10-03T00:00:00.000Z', 7, 'ai.chat');
  await entry(app, me.account_id, '2026-09-30T23:59:59.999Z', 9, 'ai.chat');
  await entry(app, me.account_id, '2026-10-02T01:00:00.000Z', 0, null);
  await entry(app, me.account_id, '2026-10-02T02:00:00.000Z', -20_000_000, null, 'topup');
  await entry(app, other.account_id, '2026-10-02T02:00:00.000Z', 5, 'ai.chat');

  const range = '?from=2026-10-01T00:00:00.000Z&to=2026-10-03T00:00:00.000Z';
  const days = await usage(app, me, range);
  t.equal(days.statusCode, 200);
  t.same(days.json(), {
    items: [
      { day: '2026-10-01', cost_usd: 0.0001, calls: 1 },
      { day: '2026-10-02', cost_usd: 1.00025, calls: 3 },
    ],
    from: '2026-10-01T00:00:00.000Z',
    to: '2026-10-03T00:00:00.000Z',
    total_usd: 1.00035,
  });
  const caps = await usage(app, me, `${range}&group_by=capability`);
  t.same(caps.json().items, [
    { capability: 'ai.chat', cost_usd: 0.00035, calls: 2 },
    { capability: 'email.send', cost_usd: 1, calls: 1 },
    { capability: 'other', cost_usd: 0, calls: 1 },
  ]);
  // Offsets other than Z are read as the instant they name.
  const offset = await usage(
    app,
    me,
    `?from=${encodeURIComponent('2026-10-02T01:00:00+01:00')}&to=${encodeURIComponent('2026-10-02T03:00:00+02:00')}`
  );
  t.same(
    offset.json().items,
    [{ day: '2026-10-02', cost_usd: 0.00025, calls: 1 }],
    'the free call at 01:00Z is the exclusive end'
  );
  t.equal(offset.json().from, '2026-10-02T00:00:00.000Z');

  const empty = await usage(app, me, '?from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z');
  t.same(empty.json(), { items: [], from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z', total_usd: 0 });
});

t.test('bad dates, ranges and group_by are 400 naming the parameter', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'v' }]);
  const me = await activate(app);
  const cases: [string, string, RegExp][] = [
    ['?from=yesterday', 'from', /from/],
    ['?to=2026-13-01T00:00:00Z', 'to', /to/],
    ['?from=2026-10-01', 'from', /from/],
    ['?group_by=week', 'group_by', /must be one of "day", "capability"/],
    ['?from=2026-10-02T00:00:00Z&to=2026-10-01T00:00:00Z', 'from', /^from must be before to\.$/],
    ['?from=2026-10-01T00:00:00Z&to=2026-10-01T00:00:00Z', 'from', /^from must be before to\.$/],
    ['?limit=5', 'limit', /is not a known field/],
  ];
  for (const [query, param, message] of cases) {
    const res = await usage(app, me, query);
    t.equal(res.statusCode, 400, query);
    t.equal(res.json().error.code, 'validation_failed', query);
    t.equal(res.json().error.param, param, query);
    t.match(res.json().error.message, message, query);
  }
  const anon = await app.inject({ method: 'GET', url: '/v1/account/usage' });
  t.equal(anon.statusCode, 401);
});
