import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { makeApp, activate, freshDatabaseUrl } from '../../helpers/app.js';
import { loadConfig } from '../../../config/load.js';
import { buildApp } from '../../../core/app.js';
import { keepIdempotentResponse } from '../../../core/http/idempotency.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frozenClock } from '../../helpers/clock.js';
import { until } from '../../helpers/wait.js';

// The lease on an idempotency claim (issue 13): a claim whose owner stopped renewing it is
// taken over by a retry; one whose owner is alive is not. The two-process kill -9 case is in
// test/core/node-death.soak.ts.

const claimRow = (app: FastifyInstance, key: string) =>
  app.svc.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).executeTakeFirstOrThrow();

t.test('a claim left running by a dead owner: 409 until its lease lapses, then a retry runs the request', async (t) => {
  const { app } = await makeApp(t, { limits: { idempotency_lease_seconds: 1 } });
  const a = await activate(app);
  const send = () =>
    app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 'lease', idempotency_key: 'L-1' },
    });
  const first = await send();
  t.equal(first.statusCode, 200);
  // What a node killed mid-request leaves: the claim running, owned by a process that is gone.
  const dead = 'gone-host:4242:abcdefgh';
  await app.svc.db
    .updateTable('idempotency_keys')
    .set({ state: 'running', status: null, response: null, owner: dead, lease_until: Date.now() + 60_000 })
    .where('key', '=', 'L-1')
    .execute();
  const busy = await send();
  t.equal(busy.statusCode, 409);
  t.equal(busy.json().error.code, 'idempotency_in_progress');
  t.equal(busy.headers['retry-after'], '1');

  await app.svc.db
    .updateTable('idempotency_keys')
    .set({ lease_until: Date.now() - 1 })
    .where('key', '=', 'L-1')
    .execute();
  const retried = await send();
  t.equal(retried.statusCode, 200, 'after the lease lapsed the retry ran');
  t.notOk(retried.headers['idempotent-replayed']);
  t.not(retried.json().key_id, first.json().key_id, 'it ran again (the dead request stored no answer)');
  const row = await claimRow(app, 'L-1');
  t.equal(row.state, 'done');
  t.not(row.owner, dead, 'the retry took the claim over');

  // The old owner, had it been only slow, cannot store over the answer of the one that took over.
  const late = {
    idem: { accountId: a.account_id, endpoint: row.endpoint, key: 'L-1', owner: dead, leaseUntil: 0 },
  } as any;
  await keepIdempotentResponse(app.svc, late, 200, '{"late":true}');
  const replay = await send();
  t.equal(replay.headers['idempotent-replayed'], 'true');
  t.equal(replay.json().key_id, retried.json().key_id, 'the replay is the answer of the request that took over');
});

t.test('a claim left by a dead owner whose answer was committed is replayed, not run again', async (t) => {
  const { app } = await makeApp(t, { limits: { idempotency_lease_seconds: 1 } });
  const a = await activate(app);
  const send = () =>
    app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 'done', idempotency_key: 'D-1' },
    });
  const first = await send();
  await app.svc.db
    .updateTable('idempotency_keys')
    .set({ owner: 'gone-host:4242:abcdefgh', lease_until: Date.now() - 1 })
    .where('key', '=', 'D-1')
    .execute();
  const again = await send();
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json().key_id, first.json().key_id);
});

t.test('a live request keeps its claim past the lease: renewed while it runs, held to its call deadline', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lease-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = loadConfig({
    object: {
      data_dir: dir,
      database: { url: await freshDatabaseUrl(t, dir) },
      log: { level: 'silent' },
      limits: { idempotency_lease_seconds: 1 },
    },
    env: {},
  });
  const app = await buildApp(config);
  t.teardown(() => app.close());
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  let deadline = 0;
  // A slow idempotent operation: no vendor call first, then one with a deadline 30 s out.
  app.post('/v1/test/slow', { config: { scope: 'account', idempotent: true } }, async (req) => {
    await finished;
    deadline = Date.now() + 30_000;
    req.meter.onDeadline?.(deadline);
    await new Promise((r) => setTimeout(r, 200));
    return { ok: true };
  });
  await app.ready();
  const a = await activate(app);
  const send = () =>
    app.inject({ method: 'POST', url: '/v1/test/slow', headers: { ...a.auth, 'idempotency-key': 'S-1' }, payload: {} });
  // Time moves only in the test's steps, each shorter than a lease, and each waits for the
  // renewal it brings: a loaded machine cannot let the lease lapse between two renewals.
  const clock = frozenClock(t);
  const running = send();
  await until('the claim', () =>
    claimRow(app, 'S-1').then(
      () => true,
      () => false
    )
  );
  for (let step = 0; step < 5; step++) {
    clock.advance(500); // two and a half leases in all
    await until('the lease renewed', async () => Number((await claimRow(app, 'S-1')).lease_until) >= Date.now() + 1000);
  }
  t.ok(Number((await claimRow(app, 'S-1')).lease_until) > Date.now(), 'the running request renewed its lease');
  const busy = await send();
  t.equal(busy.statusCode, 409, 'a retry does not take over a claim whose owner is alive');
  finish();
  await until(
    "the claim held past the call's deadline",
    async () => deadline > 0 && Number((await claimRow(app, 'S-1')).lease_until) >= deadline + 1000
  );
  t.equal((await running).statusCode, 200);
  const replay = await send();
  t.equal(replay.headers['idempotent-replayed'], 'true');
});

t.test('a request refused with 400 by its handler does not use up its key: the corrected retry runs', async (t) => {
  const { app } = await makeApp(t, { tiers: { pro: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 1 } } });
  const a = await activate(app);
  const upgrade = (target: string) =>
    app.inject({
      method: 'POST',
      url: '/v1/account/tier/upgrade',
      headers: a.auth,
      payload: { target_tier: target, idempotency_key: 'T-1' },
    });
  const bad = await upgrade('gold');
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.code, 'validation_failed');
  t.equal(
    (await app.svc.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'T-1').execute()).length,
    0,
    'nothing stored for the 400'
  );
  const fixed = await upgrade('pro');
  t.equal(fixed.statusCode, 200, 'the corrected request with the same key runs');
  t.equal(fixed.json().tier, 'pro');
  const replay = await upgrade('pro');
  t.equal(replay.headers['idempotent-replayed'], 'true', 'and is then kept as usual');
});
