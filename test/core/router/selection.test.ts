import t from 'tap';
import { activate } from '../../helpers/app.js';
import { attemptsOf, meterCall, money, scriptedApp, script } from '../../helpers/scripted-app.js';

// database-independent: candidate selection; no row is read but the account's, which every file reads.

t.test('a pinned vendor serves, by instance id or adapter name; an unknown pin is 503', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);
  const pinned = await meterCall(app, acct.auth, { input: 'x', vendor: 'b' });
  t.equal(pinned.statusCode, 200);
  t.equal(pinned.json().vendor, 'b');
  t.equal(script('a').calls.length, 0);

  const byAdapter = await meterCall(app, acct.auth, { input: 'x', vendor: 'svc-vendor-scripted' });
  t.equal(byAdapter.json().vendor, 'a');

  const unknown = await meterCall(app, acct.auth, { input: 'x', vendor: 'zzz' });
  t.equal(unknown.statusCode, 503);
  t.equal(unknown.json().error.code, 'no_vendor_available');
  t.equal(unknown.json().error.param, 'vendor');
  t.match(unknown.json().error.message, 'Configured for it: a, b.');
});

t.test('the model steers to the instances that serve it', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'small', models: ['m-small'] },
    { id: 'large', models: ['m-large'] },
    { id: 'any' },
  ]);
  const acct = await activate(app);
  const large = await meterCall(app, acct.auth, { input: 'x', model: 'm-large' });
  t.equal(large.json().vendor, 'large');
  t.equal(large.json().output.model, 'm-large');
  t.equal((await meterCall(app, acct.auth, { input: 'x', model: 'm-small' })).json().vendor, 'small');
  // An instance with no model list serves any model.
  t.equal((await meterCall(app, acct.auth, { input: 'x', model: 'm-other' })).json().vendor, 'any');
});

t.test('a model nobody serves is 503 and says which model', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'small', models: ['m-small'] }]);
  const acct = await activate(app);
  const res = await meterCall(app, acct.auth, { input: 'x', model: 'm-huge' });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'no_vendor_available');
  t.match(res.json().error.message, 'No vendor is configured for test.run with model m-huge.');
});

t.test('region: only vendors serving the account region; a pin outside it is 403', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'cn', regions: ['china'] },
    { id: 'west', regions: ['western'] },
  ]);
  const china = await activate(app, { region: 'china' });
  const western = await activate(app, { region: 'western' });
  const auto = await activate(app);
  t.equal((await meterCall(app, china.auth, { input: 'x' })).json().vendor, 'cn');
  t.equal((await meterCall(app, western.auth, { input: 'x' })).json().vendor, 'west');
  t.equal((await meterCall(app, auto.auth, { input: 'x' })).json().vendor, 'cn');

  const pinned = await meterCall(app, china.auth, { input: 'x', vendor: 'west' });
  t.equal(pinned.statusCode, 403);
  t.equal(pinned.json().error.code, 'region_not_allowed');
  t.equal(pinned.json().error.param, 'vendor');
  t.equal(script('west').calls.length, 1, 'only the western account reached it');
  t.equal((await money(app, china.account_id)).balance, 5_000_000 - 1000, 'the refused call charged nothing');
});

t.test('region: none in the account region is 503 naming the region', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'cn', regions: ['china'] }]);
  const western = await activate(app, { region: 'western' });
  const res = await meterCall(app, western.auth, { input: 'x' });
  t.equal(res.statusCode, 503);
  t.match(res.json().error.message, 'with region western');
});

t.test('region: a global vendor serves every region', async (t) => {
  const withGlobal = await scriptedApp(t, [{ id: 'cn', regions: ['china'] }, { id: 'everywhere' }]);
  const w = await activate(withGlobal.app, { region: 'western' });
  t.equal((await meterCall(withGlobal.app, w.auth, { input: 'x' })).json().vendor, 'everywhere');
});

t.test('routes: order the candidates and leave out the others', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }, { id: 'c' }], {
    routes: { 'test.run': { strategy: 'fallback', targets: ['c', 'a'] } },
  });
  const acct = await activate(app);
  t.equal((await meterCall(app, acct.auth, { input: 'x' })).json().vendor, 'c');
  script('c').mode = 'fail';
  const res = await meterCall(app, acct.auth, { input: 'x' });
  t.equal(res.json().vendor, 'a');
  script('a').mode = 'fail';
  const none = await meterCall(app, acct.auth, { input: 'x' });
  t.equal(none.statusCode, 502);
  t.equal(script('b').calls.length, 0, 'b is not in the route');
  // The send capability has no route: every instance serves it, in config order.
  t.equal((await meterCall(app, acct.auth, { input: 'x' }, 'send')).json().vendor, 'b');
});

t.test(
  'a pin names one configured instance, inside the route or not; routes limit automatic routing only',
  async (t) => {
    const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }, { id: 'c' }], {
      routes: { 'test.run': { strategy: 'fallback', targets: ['c', 'a'] } },
    });
    const acct = await activate(app);
    const pinned = await meterCall(app, acct.auth, { input: 'x', vendor: 'b' });
    t.equal(pinned.statusCode, 200, pinned.body);
    t.equal(pinned.json().vendor, 'b', 'b serves test.run though the route leaves it out');
    t.equal((await meterCall(app, acct.auth, { input: 'x' })).json().vendor, 'c', 'unpinned calls keep the route');
    const missing = await meterCall(app, acct.auth, { input: 'x', vendor: 'nope' });
    t.equal(missing.statusCode, 503);
    t.match(missing.json().error.message, 'Configured for it: a, b, c.');
  }
);

t.test('nothing serves the capability: 503 that says how to add a vendor, nothing charged', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a', capabilities: ['test.run'] }]);
  const acct = await activate(app);
  const res = await meterCall(app, acct.auth, { input: 'x' }, 'send');
  t.equal(res.statusCode, 503);
  const e = res.json().error;
  t.equal(e.code, 'no_vendor_available');
  t.equal(
    e.message,
    'No vendor is configured for test.send. Add one under `vendors:` in the config file (see docs/configuration.md).'
  );
  t.same(e.details, { capability: 'test.send' });
  t.same(await money(app, acct.account_id), { balance: 5_000_000, usage: [], holds: 0 });
});

t.test('routes with strategy cheapest try the cheapest estimate first', async (t) => {
  const { app } = await scriptedApp(
    t,
    [
      { id: 'dear', price_micros: 900 },
      { id: 'mid', price_micros: 500 },
      { id: 'cheap', price_micros: 100 },
    ],
    {
      routes: { 'test.run': { strategy: 'cheapest', targets: ['dear', 'mid', 'cheap'] } },
    }
  );
  // app.ts hands the config's strategy to the registry; set it here too so this test does not depend on that line.
  app.svc.vendors.setRoute('test.run', ['dear', 'mid', 'cheap'], 'cheapest');
  const acct = await activate(app);
  t.equal((await meterCall(app, acct.auth, { input: 'x' })).json().vendor, 'cheap');
  script('cheap').once.push('fail');
  // mid (5x cheap) is beyond the default cost cap, so allow it.
  const res = await meterCall(app, acct.auth, { input: 'x', max_cost_multiplier: 10 });
  t.same(attemptsOf(res.json()), ['cheap:unavailable', 'mid:ok']);
});

t.test(
  "assertServed: nothing when an instance serves; else the one 503 with the planner's docs and hint",
  async (t) => {
    const { app } = await scriptedApp(t, [{ id: 'a', capabilities: ['test.run'], regions: ['china'] }]);
    const router = app.svc.router;
    router.planner('test.send', (_req, cands) => cands.map((c) => ({ id: c.instance.id })), {
      docs: 'docs/send.md',
      hint: 'Install the sender.',
    });
    t.doesNotThrow(() => router.assertServed('test.run', { region: 'china' }));
    t.throws(() => router.assertServed('test.send', { region: 'china' }), {
      code: 'no_vendor_available',
      status: 503,
      message:
        /^No vendor is configured for test\.send with region china\. Install the sender\. Add one .*docs\/send\.md/,
    });
    t.throws(() => router.assertServed('test.run', { region: 'western' }), {
      code: 'no_vendor_available',
      message: /test\.run with region western\. Add one .*docs\/configuration\.md/,
    });
  }
);

t.test(
  'routes may name an embedded engine without configuring it again; an unknown target stops the boot',
  async (t) => {
    const { app } = await scriptedApp(t, [{ id: 'a' }], {
      routes: { 'image.metadata': { strategy: 'fallback', targets: ['sharp'] } },
    });
    t.same(
      app.svc.vendors.serving('image.metadata').map((i) => i.id),
      ['sharp'],
      'the embedded sharp engine is the route'
    );
    t.equal(app.svc.vendors.get('sharp')?.def.embedded, true);
    await t.rejects(
      scriptedApp(t, [{ id: 'a' }], { routes: { 'test.run': { strategy: 'fallback', targets: ['a', 'nope'] } } }),
      /routes\.test\.run\.targets: "nope" is not the id of a configured vendor instance or of an embedded engine/
    );
  }
);
