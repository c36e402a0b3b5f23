import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';
import { VendorFailure, type FailureKind } from '../../../core/router/failure.js';
import type { CapabilityImpl, CapabilitySpec, InvokeOptions, VendorDefinition } from '../../../core/define.js';
import type { Credentials, CredentialsProvider } from '../../../core/router/credentials.js';
import type { RegisteredInstance } from '../../../core/router/registry.js';
import type { Tap } from '../../helpers/tap.js';

// database-independent: the router's loop driven directly; the wallet it charges is core/wallet's tests', on both.

// The router's one loop, driven directly: calls and streams share selection, estimate and cost
// cap, reservation, classification, cooldowns and failover; a planner hook orders candidates
// and gives each its plan; a credentials provider puts a caller's own keys first.

interface UnitPlan {
  model: string;
  price: number;
  credentials?: Credentials;
}

interface Seen {
  capability: string;
  input: unknown;
  plan: unknown;
}

/** An in-process adapter: answers, fails as told (one behaviour per call, then `ok`), records what it got. */
class Unit {
  readonly seen: Seen[] = [];
  readonly next: Array<FailureKind | 'ok' | VendorFailure> = [];
  constructor(
    readonly id: string,
    readonly price: number
  ) {}

  private outcome(capability: string, input: unknown, opts: InvokeOptions): FailureKind | 'ok' | VendorFailure {
    this.seen.push({ capability, input, plan: opts.plan });
    return this.next.shift() ?? 'ok';
  }

  impl(capability: string): CapabilityImpl<{ text: string }, { text: string }, UnitPlan> {
    return {
      invoke: async (input, opts) => {
        const r = this.outcome(capability, input, opts);
        if (r instanceof VendorFailure) throw r;
        if (r !== 'ok') throw new VendorFailure(r, `${this.id} says ${r}`);
        return { text: `${this.id}:${input.text}` };
      },
      price: (_input, _out, plan) => plan?.price ?? this.price,
    };
  }

  stream(capability: string): CapabilityImpl<{ text: string }, AsyncIterable<string>, UnitPlan> {
    const id = this.id;
    return {
      invoke: async (input, opts) => {
        const r = this.outcome(capability, input, opts);
        if (r instanceof VendorFailure) throw r;
        if (r !== 'ok') throw new VendorFailure(r, `${id} says ${r}`);
        return (async function* events() {
          yield `${id}:1`;
          yield `${id}:2`;
        })();
      },
      // A stream is priced by the usage it reports: here one micro-USD an event, or the plan's price.
      price: (_input, usage, plan) => (usage === undefined ? (plan?.price ?? this.price) : Number(usage)),
    };
  }
}

async function loopApp(t: Tap, prices: Record<string, number>, opts: { idempotent?: boolean } = {}) {
  // The byok area would register the gateway's own credentials provider; a test brings its own.
  const { app } = await makeApp(t, { plugins: { byok: false } });
  const units = new Map<string, Unit>();
  // This test stands in for an area that declares `unit.*`: the registry refuses, as at boot, an
  // instance serving a capability no area declared.
  const declared = (app.svc.vendors as unknown as { declared: Map<string, CapabilitySpec> }).declared;
  declared.set('unit.run', { idempotent: true });
  declared.set('unit.stream', { idempotent: true });
  for (const [id, price] of Object.entries(prices)) {
    const u = new Unit(id, price);
    units.set(id, u);
    const inst: RegisteredInstance = {
      id,
      adapter: 'unit',
      regions: ['global'],
      def: { name: 'unit' } as VendorDefinition,
      redactedConfig: {},
      instance: { capabilities: { 'unit.run': u.impl('unit.run'), 'unit.stream': u.stream('unit.stream') } },
    };
    app.svc.vendors.add(inst);
  }
  const idempotent = opts.idempotent ?? true;
  app.svc.capabilities.set('unit.run', { idempotent, description: 'a unit call' });
  app.svc.capabilities.set('unit.stream', { idempotent, description: 'a unit stream' });
  const acct = await activate(app);
  const unit = (id: string) => units.get(id)!;
  const balance = () => app.svc.wallet.balance(acct.account_id);
  return { app, unit, accountId: acct.account_id, balance };
}

const attempts = (list: Array<{ vendor: string; status: string }>) => list.map((a) => `${a.vendor}:${a.status}`);

/** How one call of either kind (`unit.run`, `unit.stream`) with input `x` fails. */
async function rejection(
  app: Awaited<ReturnType<typeof loopApp>>['app'],
  capability: string,
  opts: { accountId: string; maxCostMultiplier?: number }
): Promise<any> {
  const router = app.svc.router;
  try {
    if (capability === 'unit.run') await router.call(capability, { text: 'x' }, opts);
    else await router.stream(capability, { text: 'x' }, { ...opts, firstEventTimeoutMs: 1000 });
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

t.test('call and stream fail over the same way, and charge once, the answering vendor', async (t) => {
  const { app, unit, accountId, balance } = await loopApp(t, { a: 100, b: 120 });
  unit('a').next.push('unavailable');
  const before = await balance();
  const r = await app.svc.router.call<{ text: string }, { text: string }>('unit.run', { text: 'x' }, { accountId });
  t.equal(r.output.text, 'b:x');
  t.same(attempts(r.attempts), ['a:unavailable', 'b:ok']);
  t.equal(r.costMicros, 120);
  t.equal(before - (await balance()), 120);

  // a is cooling now: the stream starts at b; make b fail before its first event instead.
  unit('b').next.push('rate_limited');
  const beforeStream = await balance();
  const s = await app.svc.router.stream<{ text: string }, string, number>(
    'unit.stream',
    { text: 'x' },
    { accountId, firstEventTimeoutMs: 1000 }
  );
  t.equal(s.vendor, 'a', 'the cooling vendor is still tried, last');
  t.same(attempts(s.attempts), ['b:rate_limited', 'a:ok']);
  t.equal(s.first, 'a:1');
  t.same(await s.rest.next(), { value: 'a:2', done: false });
  t.equal(await s.settle(2), 2, 'settled later, with the usage produced');
  t.equal(beforeStream - (await balance()), 2, 'the reservation settled at what was produced');
  s.close();
});

t.test('cooldowns order candidates: a vendor that just failed goes last', async (t) => {
  const { app, unit, accountId } = await loopApp(t, { a: 100, b: 100 });
  unit('a').next.push('unavailable');
  await app.svc.router.call('unit.run', { text: 'x' }, { accountId });
  const r = await app.svc.router.call('unit.run', { text: 'y' }, { accountId });
  t.same(attempts(r.attempts), ['b:ok'], 'a is cooling down');
  t.ok(app.svc.router.cooldowns.cooling('a'));
});

t.test('the cost cap skips a dearer candidate after the primary fails (calls and streams)', async (t) => {
  const { app, unit, accountId } = await loopApp(t, { a: 100, b: 200 });
  for (const capability of ['unit.run', 'unit.stream']) {
    app.svc.router.cooldowns.success('a');
    unit('a').next.push('unavailable');
    const e = await rejection(app, capability, { accountId, maxCostMultiplier: 1.5 });
    t.equal(e.code, 'vendor_error', capability);
    t.same(attempts(e.details.attempts), ['a:unavailable', 'b:skipped_cost_cap']);
  }
  t.equal(unit('b').seen.length, 0, 'b was never invoked');
});

t.test('a client error stops the loop: 422, no failover, no cooldown', async (t) => {
  const { app, unit, accountId, balance } = await loopApp(t, { a: 100, b: 100 });
  const before = await balance();
  for (const capability of ['unit.run', 'unit.stream']) {
    unit('a').next.push('client_error');
    const e = await rejection(app, capability, { accountId });
    t.equal(e.code, 'unprocessable', capability);
    t.same(attempts(e.details.attempts), ['a:client_error']);
  }
  t.equal(unit('b').seen.length, 0);
  t.notOk(app.svc.router.cooldowns.cooling('a'));
  t.equal(await balance(), before, 'every hold released');
});

t.test("a client error with status 413 (over the vendor's size cap) is 413 payload_too_large", async (t) => {
  const { app, unit, accountId, balance } = await loopApp(t, { a: 100, b: 100 });
  const before = await balance();
  for (const capability of ['unit.run', 'unit.stream']) {
    unit('a').next.push(new VendorFailure('client_error', 'over 40 MP', { status: 413 }));
    const e = await rejection(app, capability, { accountId });
    t.equal(e.code, 'payload_too_large', capability);
    t.match(e.message, /over 40 MP/);
  }
  t.equal(unit('b').seen.length, 0);
  t.equal(await balance(), before);
});

t.test(
  'a non-idempotent capability does not fail over once the vendor may have acted, but does when nothing was sent',
  async (t) => {
    const { app, unit, accountId } = await loopApp(t, { a: 100, b: 100 }, { idempotent: false });
    for (const capability of ['unit.run', 'unit.stream']) {
      app.svc.router.cooldowns.success('a');
      unit('a').next.push('unavailable');
      const e = await rejection(app, capability, { accountId });
      t.equal(e.code, 'vendor_error', capability);
      t.same(attempts(e.details.attempts), ['a:unavailable']);
    }
    t.equal(unit('b').seen.length, 0);
    app.svc.router.cooldowns.success('a');
    unit('a').next.push('not_sent');
    const r = await app.svc.router.call('unit.run', { text: 'x' }, { accountId });
    t.same(attempts(r.attempts), ['a:not_sent', 'b:ok'], 'a request that never left is safe to send elsewhere');
    for (const refused of ['rate_limited', 'quota', 'auth'] as const) {
      app.svc.router.cooldowns.success('a');
      app.svc.router.cooldowns.success('b');
      unit('a').next.push(refused);
      const again = await app.svc.router.call('unit.run', { text: 'x' }, { accountId });
      t.same(attempts(again.attempts), [`a:${refused}`, 'b:ok'], `a vendor that refused (${refused}) did not act`);
    }
    app.svc.router.cooldowns.success('a');
    unit('a').next.push('timeout');
    const timedOut = await rejection(app, 'unit.run', { accountId });
    t.same(attempts(timedOut.details.attempts), ['a:timeout'], 'one that may have acted is not doubled');
  }
);

/** A caller's keys held in memory: the interface the byok area implements over its store. */
class MemoryCredentials implements CredentialsProvider {
  readonly invalidated: string[] = [];
  constructor(readonly keys: Map<string, Map<string, Credentials>>) {}
  async credentials(accountId: string, instances: readonly RegisteredInstance[]) {
    const mine = this.keys.get(accountId) ?? new Map();
    return new Map(instances.filter((i) => mine.has(i.id)).map((i) => [i.id, mine.get(i.id)!]));
  }
  feeMicros() {
    return 7;
  }
  cooldownScope(accountId: string) {
    return `byok:${accountId}`;
  }
  async invalidate(_accountId: string, instanceId: string) {
    this.invalidated.push(instanceId);
  }
}

t.test(
  'a planner hook orders candidates and each adapter gets only its own plan; caller keys go first, at the fee',
  async (t) => {
    const { app, unit, accountId, balance } = await loopApp(t, { a: 100, b: 100, c: 100 });
    const provider = new MemoryCredentials(new Map([[accountId, new Map([['c', { api_key: 'sk-caller-c-123456' }]])]]));
    app.svc.router.credentials(provider);
    // The planner prefers b, then a, and drops nothing; it puts a caller's key into that instance's plan only.
    app.svc.router.planner<{ prefer: string }, { id: string; plan: UnitPlan }>('unit.run', (req, cands) => {
      t.same(req.request, { prefer: 'b' });
      const order = ['b', 'a', 'c'];
      return [...cands]
        .sort((x, y) => order.indexOf(x.instance.id) - order.indexOf(y.instance.id))
        .map((c) => ({
          id: c.instance.id,
          plan: c.byok
            ? { model: `m-${c.instance.id}`, price: 0, credentials: c.byok.credentials }
            : { model: `m-${c.instance.id}`, price: 50 },
        }));
    });
    unit('c').next.push('auth');
    unit('b').next.push('unavailable');
    const before = await balance();
    // The caller-key candidate costs only the fee: a wide cost cap lets the paid ones follow it.
    const opts = { accountId, request: { prefer: 'b' }, maxCostMultiplier: 100 };
    const r = await app.svc.router.call('unit.run', { text: 'x' }, opts);
    t.same(
      attempts(r.attempts),
      ['c:auth', 'b:unavailable', 'a:ok'],
      "the caller's own key first, then the planner's order"
    );
    t.equal(before - (await balance()), 50, 'the plan priced the answer');
    t.same(
      unit('c').seen.map((s) => s.plan),
      [{ model: 'm-c', price: 0, credentials: { api_key: 'sk-caller-c-123456' } }]
    );
    t.same(
      unit('b').seen.map((s) => s.plan),
      [{ model: 'm-b', price: 50 }]
    );
    t.same(
      unit('a').seen.map((s) => s.plan),
      [{ model: 'm-a', price: 50 }]
    );
    for (const id of ['a', 'b', 'c'])
      t.same(
        unit(id).seen.map((s) => s.input),
        [{ text: 'x' }],
        `${id}: the input as the area gave it`
      );
    t.same(provider.invalidated, ['c'], 'the refused key is invalidated');
    t.ok(app.svc.router.cooldowns.cooling(`c|byok:${accountId}`), 'the caller key cools down for this caller');
    t.notOk(app.svc.router.cooldowns.cooling('c'), 'not for everyone');
    const planned = await app.svc.router.plan('unit.run', { accountId, request: { prefer: 'b' } });
    t.match(planned, [{ id: 'c', byok: { fee: 7 } }, { id: 'b' }, { id: 'a' }]);

    // The fee is charged as it is, on top of the caller-key plan's vendor price (0).
    unit('c').next.length = 0;
    app.svc.router.cooldowns.success(`c|byok:${accountId}`);
    const own = await app.svc.router.call('unit.run', { text: 'y' }, opts);
    t.equal(own.vendor, 'c');
    t.equal(own.costMicros, 7);
  }
);
