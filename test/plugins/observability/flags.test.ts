// long-pole: 20,000 flag evaluations through OpenFeature's OFREP provider (the rollout's must-show).
import t from 'tap';
import { OpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { until } from '../../helpers/wait.js';
import { get, post, rowCount } from './obs-app.js';

// Feature flags: CRUD with versions and an audit, evaluation from memory (dropped through the
// bus), targeting rules, stable percentage rollouts and variants; OFREP through OpenFeature's
// own provider.

// Under a loaded shared machine the evaluations alone have taken over the suite's 120 s.
t.setTimeout(300_000);

t.test('feature flags', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const put = (url: string, payload: unknown, who = a) =>
    app.inject({ method: 'PUT', url, headers: who.auth, payload: payload as any });
  const del = (url: string, who = a) => app.inject({ method: 'DELETE', url, headers: who.auth });
  const evaluate = async (key: string, qs: string, who = a) =>
    (await get(app, who, `/v1/observability/flags/${key}?${qs}`)).json();

  const beta = {
    key: 'beta-ui',
    type: 'boolean',
    rules: [{ conditions: [{ attribute: 'country', op: 'in', values: ['DE', 'AT'] }], serve: { variant: 'on' } }],
    fallthrough: { variant: 'off' },
  };

  t.test('create, read, update with a version, delete; every change audited', async (t) => {
    const res = await post(app, a, '/v1/observability/flags', beta);
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), {
      key: 'beta-ui',
      version: 1,
      enabled: true,
      variants: { on: true, off: false },
      off_variant: 'off',
    });
    t.equal((await post(app, a, '/v1/observability/flags', beta)).statusCode, 409, 'the key is taken');
    t.equal((await post(app, b, '/v1/observability/flags', beta)).statusCode, 200, 'keys are per account');
    t.same(await evaluate('beta-ui', 'distinct_id=u1&country=DE'), {
      key: 'beta-ui',
      enabled: true,
      value: true,
      variant: 'on',
      reason: 'TARGETING_MATCH',
    });
    t.match(await evaluate('beta-ui', 'distinct_id=u1&country=FR'), { enabled: false, reason: 'DEFAULT' });

    const { key: _k, ...body } = beta;
    const v2 = await put('/v1/observability/flags/beta-ui', { ...body, fallthrough: { variant: 'on' }, version: 1 });
    t.equal(v2.json().version, 2);
    t.match(await evaluate('beta-ui', 'country=FR'), { enabled: true }, 'the change is seen at once');
    const stale = await put('/v1/observability/flags/beta-ui', { ...body, version: 1 });
    t.equal(stale.statusCode, 409);
    t.match(stale.json().error, { code: 'conflict', details: { current_version: 2 } });
    t.equal((await del('/v1/observability/flags/beta-ui?version=1')).statusCode, 409);
    t.equal((await get(app, a, '/v1/observability/flags/beta-ui/definition')).json().version, 2);
    t.equal((await get(app, b, '/v1/observability/flags/beta-ui/definition')).json().version, 1, "b's own flag");

    await post(app, a, '/v1/observability/flags', {
      key: 'tmp',
      type: 'string',
      variants: { x: 'x' },
      off_variant: 'x',
      fallthrough: { variant: 'x' },
    });
    t.equal((await del('/v1/observability/flags/tmp?version=1')).statusCode, 200);
    t.equal((await get(app, a, '/v1/observability/flags/tmp')).statusCode, 404);
    t.equal((await del('/v1/observability/flags/tmp')).statusCode, 404);

    const audit = (await get(app, a, '/v1/observability/flags/beta-ui/audit')).json().items;
    t.same(
      audit.map((x: any) => [x.action, x.version]),
      [
        ['updated', 2],
        ['created', 1],
      ]
    );
    t.match(audit[0], {
      key_id: /^key_/,
      before: { fallthrough: { variant: 'off' } },
      after: { fallthrough: { variant: 'on' } },
    });
    const list = (await get(app, a, '/v1/observability/flags')).json();
    t.same(
      list.items.map((f: any) => f.key),
      ['beta-ui']
    );
  });

  t.test('types, variants, disabled flags and refused definitions', async (t) => {
    const theme = await post(app, a, '/v1/observability/flags', {
      key: 'theme',
      type: 'string',
      variants: { blue: 'blue', green: 'green', red: 'red' },
      off_variant: 'blue',
      rules: [{ conditions: [{ attribute: 'plan', op: 'eq', value: 'pro' }], serve: { variant: 'red' } }],
      fallthrough: {
        rollout: [
          { variant: 'blue', weight: 50 },
          { variant: 'green', weight: 50 },
        ],
      },
    });
    t.equal(theme.statusCode, 200, theme.body);
    t.match(await evaluate('theme', 'distinct_id=u1&plan=pro'), {
      value: 'red',
      reason: 'TARGETING_MATCH',
      enabled: true,
    });
    const split = await evaluate('theme', 'distinct_id=u1');
    t.match(split, { reason: 'SPLIT' });
    t.ok(['blue', 'green'].includes(split.value));
    t.same(await evaluate('theme', 'distinct_id=u1'), split, 'stable for an id');
    const noId = await get(app, a, '/v1/observability/flags/theme');
    t.equal(noId.statusCode, 400, 'a split needs distinct_id');
    t.equal(noId.json().error.param, 'distinct_id');
    await post(app, a, '/v1/observability/flags', {
      key: 'limit',
      type: 'number',
      variants: { low: 10, high: 100 },
      off_variant: 'low',
      rules: [{ conditions: [{ attribute: 'age', op: 'gte', value: 18 }], serve: { variant: 'high' } }],
      fallthrough: { variant: 'low' },
    });
    t.match(await evaluate('limit', 'age=30'), { value: 100, reason: 'TARGETING_MATCH' });
    t.match(await evaluate('limit', 'age=3'), { value: 10, reason: 'DEFAULT' });
    await post(app, a, '/v1/observability/flags', {
      key: 'cfg',
      type: 'json',
      enabled: false,
      variants: { a: { n: 1 }, b: [1] },
      off_variant: 'b',
      fallthrough: { variant: 'a' },
    });
    t.same(await evaluate('cfg', ''), { key: 'cfg', enabled: false, value: [1], variant: 'b', reason: 'DISABLED' });

    const before = await rowCount(app, 'obs_flags');
    for (const [why, flag] of [
      [
        'a string value in a number flag',
        { key: 'x1', type: 'number', variants: { a: '1' }, off_variant: 'a', fallthrough: { variant: 'a' } },
      ],
      ['no variants', { key: 'x2', type: 'string', off_variant: 'a', fallthrough: { variant: 'a' } }],
      ['an unknown variant', { key: 'x3', type: 'boolean', fallthrough: { variant: 'maybe' } }],
      [
        'weights not 100',
        {
          key: 'x4',
          type: 'boolean',
          fallthrough: {
            rollout: [
              { variant: 'on', weight: 30 },
              { variant: 'off', weight: 60 },
            ],
          },
        },
      ],
      [
        'variant and rollout',
        { key: 'x5', type: 'boolean', fallthrough: { variant: 'on', rollout: [{ variant: 'on', weight: 100 }] } },
      ],
      [
        'in without values',
        {
          key: 'x6',
          type: 'boolean',
          rules: [{ conditions: [{ attribute: 'c', op: 'in' }], serve: { variant: 'on' } }],
        },
      ],
      ['a bad key', { key: 'no spaces', type: 'boolean' }],
      [
        'an unknown op',
        {
          key: 'x7',
          type: 'boolean',
          rules: [{ conditions: [{ attribute: 'c', op: 'regex', value: '.' }], serve: { variant: 'on' } }],
        },
      ],
    ] as [string, unknown][]) {
      const res = await post(app, a, '/v1/observability/flags', flag);
      t.equal(res.statusCode, 400, why);
    }
    t.equal(await rowCount(app, 'obs_flags'), before, 'nothing stored');
    t.equal(
      (await get(app, b, '/v1/observability/flags/theme?distinct_id=u1')).statusCode,
      404,
      "another account's flag"
    );
  });

  t.test('evaluation reads memory; a bus message drops it (a change on another node)', async (t) => {
    t.match(await evaluate('limit', 'age=30'), { value: 100 });
    const def = JSON.parse(
      (
        await app.svc.db
          .selectFrom('obs_flags')
          .select('definition')
          .where('account_id', '=', a.account_id)
          .where('key', '=', 'limit')
          .executeTakeFirstOrThrow()
      ).definition
    );
    await app.svc.db
      .updateTable('obs_flags')
      .set({ definition: JSON.stringify({ ...def, variants: { low: 1, high: 2 } }), version: 99 })
      .where('account_id', '=', a.account_id)
      .where('key', '=', 'limit')
      .execute();
    t.match(await evaluate('limit', 'age=30'), { value: 100 }, 'still the copy in memory');
    await app.svc.bus.publish('observability.flags', { account_id: a.account_id });
    await until('the copy dropped', async () => (await evaluate('limit', 'age=30')).value === 2);
  });

  t.test('OpenFeature through OFREP: a targeted flag and a stable 30 % → 50 % rollout', async (t) => {
    const rollout = (pct: number) => ({
      type: 'boolean',
      fallthrough: {
        rollout: [
          { variant: 'on', weight: pct },
          { variant: 'off', weight: 100 - pct },
        ],
      },
    });
    t.equal((await post(app, a, '/v1/observability/flags', { key: 'new-checkout', ...rollout(30) })).statusCode, 200);
    await OpenFeature.setProviderAndWait(
      new OFREPProvider({ baseUrl: base, headers: { Authorization: `Bearer ${a.key}` } })
    );
    t.teardown(() => OpenFeature.clearProviders());
    const client = OpenFeature.getClient();

    const de = await client.getBooleanDetails('beta-ui', false, { targetingKey: 'u1', country: 'DE' });
    t.match(de, { value: true, reason: 'TARGETING_MATCH', variant: 'on' });
    t.equal((await client.getStringDetails('theme', 'none', { targetingKey: 'u1', plan: 'pro' })).value, 'red');
    const missing = await client.getBooleanDetails('nope', false, { targetingKey: 'u1' });
    t.match(missing, { value: false, errorCode: 'FLAG_NOT_FOUND' });
    const noKey = await client.getBooleanDetails('new-checkout', false, {});
    t.match(noKey, { value: false, errorCode: 'TARGETING_KEY_MISSING' });

    // 20,000 evaluations: the same provider, its requests handed to the app in process
    // (fetchImplementation) rather than over loopback sockets, which would take the file ~4× as long.
    const inProcess = async (req: Request) => {
      const res = await app.inject({
        method: req.method as 'POST',
        url: new URL(req.url).pathname,
        headers: Object.fromEntries(req.headers),
        payload: await req.text(),
      });
      return new Response(res.body, {
        status: res.statusCode,
        headers: { 'content-type': String(res.headers['content-type']) },
      });
    };
    await OpenFeature.setProviderAndWait(
      'bulk',
      new OFREPProvider({
        baseUrl: base,
        headers: { Authorization: `Bearer ${a.key}` },
        fetchImplementation: inProcess,
      })
    );
    const many = OpenFeature.getClient('bulk');
    const ids = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);
    const evalAll = async (key = 'new-checkout', n = ids.length) => {
      const out: boolean[] = [];
      for (let i = 0; i < n; i += 200)
        out.push(
          ...(await Promise.all(
            ids.slice(i, Math.min(n, i + 200)).map((id) => many.getBooleanValue(key, false, { targetingKey: id }))
          ))
        );
      return out;
    };
    const at30 = await evalAll();
    const share30 = at30.filter(Boolean).length / ids.length;
    t.ok(Math.abs(share30 - 0.3) <= 0.015, `30 % rollout: ${(share30 * 100).toFixed(2)} %`);
    const v = (await get(app, a, '/v1/observability/flags/new-checkout/definition')).json().version;
    t.equal((await put('/v1/observability/flags/new-checkout', { ...rollout(50), version: v })).statusCode, 200);
    const at50 = await evalAll();
    const share50 = at50.filter(Boolean).length / ids.length;
    t.ok(Math.abs(share50 - 0.5) <= 0.015, `50 % rollout: ${(share50 * 100).toFixed(2)} %`);
    t.equal(at30.filter((on, i) => on && !at50[i]).length, 0, 'no id that had it loses it when the rollout grows');
    // Another flag at 30 % buckets everyone afresh.
    await post(app, a, '/v1/observability/flags', { key: 'other-30', ...rollout(30) });
    const other = await evalAll('other-30', 2000);
    const both = other.filter((on, i) => on && at30[i]).length / 2000;
    t.ok(Math.abs(both - 0.09) < 0.03, `independent buckets: ${(both * 100).toFixed(1)} % in both, ~9 % expected`);
  });

  t.test('OFREP bulk: every flag, ETag and 304', async (t) => {
    const bulk = (headers: Record<string, string> = {}, context: unknown = { targetingKey: 'u1', country: 'DE' }) =>
      fetch(`${base}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ context }),
      });
    const r1 = await bulk();
    t.equal(r1.status, 200);
    const etag = r1.headers.get('etag')!;
    t.match(etag, /^"/);
    const body = await r1.json();
    t.match(
      body.flags.find((f: any) => f.key === 'beta-ui'),
      { value: true, reason: 'TARGETING_MATCH' }
    );
    t.equal((await bulk({ 'if-none-match': etag })).status, 304);
    t.equal(
      (await bulk({ 'if-none-match': etag }, { targetingKey: 'u2', country: 'FR' })).status,
      200,
      'another context'
    );
    const v = (await get(app, a, '/v1/observability/flags/beta-ui/definition')).json().version;
    await put('/v1/observability/flags/beta-ui', { type: 'boolean', enabled: false, version: v });
    t.equal((await bulk({ 'if-none-match': etag })).status, 200, 'a change gives a new ETag');
    const bad = await bulk({}, 'not an object');
    t.equal(bad.status, 400);
    t.match(await bad.json(), { errorCode: 'INVALID_CONTEXT' });
    const noKey = await (await bulk({}, {})).json();
    t.match(
      noKey.flags.find((f: any) => f.key === 'new-checkout'),
      { errorCode: 'TARGETING_KEY_MISSING' }
    );
    t.equal((await fetch(`${base}/ofrep/v1/evaluate/flags`, { method: 'POST', body: '{}' })).status, 401);
  });
});
