import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabaseUrl, PG_URL } from '../helpers/app.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { openAiFake } from '../fakes/openai-fake.js';
import { MODELS } from '../plugins/ai/setup.js';

// Issue 13, items 9 and 10: a node killed (SIGKILL) in the middle of a chat call leaves an
// idempotency claim and a wallet hold. The other node, without any restart, lets a retry of
// the request run once the claim's lease lapses (the call's deadline + lease), and gives the
// hold back once it is past its expiry (deadline + grace). On PostgreSQL + Redis as in a
// cluster when SVC_TEST_DATABASE_URL is set. On SQLite one process owns the file (a second is
// refused at boot), so node B is node A restarted on it once killed: the kill took the file's
// lock with it, and node A's hold, kept in its memory, with it too (nothing charged for it).
t.setTimeout(90_000);

// The chat's own deadline (timeout_seconds); on SQLite node B's start-up (seconds on a loaded
// machine) comes inside it.
const TIMEOUT_S = PG_URL ? 4 : 15;

t.test('kill -9 mid-call: the other node runs the retry after the lease and releases the hold', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-death-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const oa = await openAiFake({ key: 'sk-oa' }).start('/v1');
  t.teardown(() => oa.close());
  const config = {
    data_dir: dir,
    database: { url: await freshDatabaseUrl(t, dir) },
    ...(PG_URL ? { redis: { url: 'redis://127.0.0.1:6379' } } : {}),
    egress: { allow_private: true },
    jobs: { poll_ms: 100, lease_ms: 1000 },
    limits: { idempotency_lease_seconds: 1, activate_per_hour: 1000 },
    tiers: { free: { rate_per_minute: 100_000, burst: 10_000, price_usd: 0 } }, // retries every 200 ms
    wallet: { hold_grace_seconds: 1, hold_sweep_seconds: 1 },
    vendors: [{ id: 'oa', use: 'openai', config: { api_key: 'sk-oa', base_url: oa.url, models: ['alpha'] } }],
    plugins: { ai: { models: MODELS.filter((m) => m.id === 'alpha') } },
  };
  // Started together (migrations are serialised across processes): most of this test is start-up.
  let b: GatewayProcess | undefined;
  let a: GatewayProcess;
  if (PG_URL)
    [a, b] = await Promise.all([startGateway(t, dir, config, 'node-a'), startGateway(t, dir, config, 'node-b')]);
  else a = await startGateway(t, dir, config, 'node-a');
  const act = await (
    await fetch(`${a.url}/v1/activate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  ).json();
  const headers = { authorization: `Bearer ${act.primary_api_key}`, 'content-type': 'application/json' };
  const balance = async (base = b!.url) =>
    (await (await fetch(`${base}/v1/account/balance`, { headers })).json()).balance_usd as number;
  // Read on node A: a node's own reserve drops its cached balance (SQLite caches it 2 s).
  const before = await balance(a.url);
  const body = JSON.stringify({
    messages: 'hello',
    model: 'alpha',
    timeout_seconds: TIMEOUT_S,
    max_tokens: 100,
    idempotency_key: 'chat-1',
  });
  const chat = (base: string) => fetch(`${base}/v1/ai/chat`, { method: 'POST', headers, body });

  oa.next({ stall: true }); // node A's call reaches the vendor and never gets an answer
  const started = Date.now();
  chat(a.url).catch(() => undefined); // dies with node A
  while (oa.requests.length < 1) {
    if (Date.now() - started > 10_000) throw new Error('node A never called the vendor');
    await new Promise((r) => setTimeout(r, 20));
  }
  const heldBalance = await balance(a.url);
  t.ok(heldBalance < before, `node A holds money for its call (${before} -> ${heldBalance})`);
  a.proc.kill('SIGKILL');
  await a.exited;
  const killed = Date.now();
  b ??= await startGateway(t, dir, config, 'node-b');
  t.ok(Date.now() - started < TIMEOUT_S * 1000, 'node B is up within the call deadline');

  const busy = await chat(b.url);
  t.equal(busy.status, 409, 'right after the kill the claim is still within its call deadline');
  t.equal((await busy.json()).error.code, 'idempotency_in_progress');

  // Retry as a load balancer would, until the request runs on node B.
  let ran: Response | undefined;
  const statuses = new Set<number>();
  while (!ran && Date.now() - killed < TIMEOUT_S * 1000 + 16_000) {
    const r = await chat(b.url);
    if (r.status === 409) {
      await r.body?.cancel();
      await new Promise((res) => setTimeout(res, 200));
    } else ran = r;
    statuses.add(r.status);
  }
  t.ok(
    ran,
    `a retry on node B ran within ${TIMEOUT_S + 16} s of the kill (statuses seen: ${[...statuses].join(', ')})`
  );
  const ranAt = Date.now();
  t.equal(ran!.status, 200);
  t.notOk(ran!.headers.get('idempotent-replayed'), 'it ran (node A stored no answer), not replayed');
  t.ok(
    ranAt - started >= TIMEOUT_S * 1000,
    `not before node A's call deadline (${ranAt - started} ms after it started)`
  );
  t.equal(oa.requests.length, 2, "the vendor saw node A's call and the retry");
  const cost = Number(ran!.headers.get('x-svc-cost-usd'));
  const replay = await chat(b.url);
  t.equal(replay.headers.get('idempotent-replayed'), 'true', 'the next retry replays the answer');

  // The hold node A took is given back by node B's sweep once past the deadline + grace.
  let now = await balance();
  while (Math.abs(now - (before - cost)) > 1e-9 && Date.now() - killed < 20_000) {
    await new Promise((r) => setTimeout(r, 200));
    now = await balance();
  }
  t.equal(
    now,
    Number((before - cost).toFixed(6)),
    PG_URL
      ? `node B released node A's hold without a restart (${Date.now() - killed} ms after the kill)`
      : `node A's hold, in its memory, went with it: nothing charged (${Date.now() - killed} ms after the kill)`
  );
  t.equal(b.proc.exitCode, null, 'node B kept running throughout');
});
