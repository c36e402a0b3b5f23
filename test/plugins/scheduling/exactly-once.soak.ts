import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../core/db/open.js';
import { freshDatabaseUrl, PG_URL } from '../../helpers/app.js';
import { startGateway, type GatewayProcess } from '../../helpers/gateway-process.js';
import { receiver } from './receiver.js';
import { until } from '../../helpers/wait.js';

// Issue 27: kill -9 of a node in the middle of N idempotent sends, then every send retried with
// its key on the node that is left (PostgreSQL: the second node, which never stopped; SQLite:
// the first, restarted on its file). Each key ends with exactly one delivery, the one every
// answer for it names, and the receiver sees each webhook-id and no other. exactly-once.test.ts
// holds the kill at the exact point on PostgreSQL; this one lands it wherever the load is.
const N = Number(process.env.SVC_ONCE_SENDS ?? 500);
t.setTimeout(300_000);

t.test(`kill -9 during ${N} idempotent sends: one delivery a key, each delivered under its id`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-once-soak-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbUrl = await freshDatabaseUrl(t, dir);
  const rx = await receiver(t);
  const config = {
    data_dir: dir,
    database: { url: dbUrl },
    ...(PG_URL ? { redis: { url: 'redis://127.0.0.1:6379' } } : {}),
    egress: { allow_private: true },
    jobs: { poll_ms: 50, lease_ms: 1000 },
    limits: { idempotency_lease_seconds: 1, activate_per_hour: 1000 },
    tiers: { free: { rate_per_minute: 100_000_000, burst: 10_000_000, price_usd: 0 } },
    plugins: { scheduling: { concurrency: 32, retry_schedule_seconds: [0, 0.2, 0.5, 1, 1] } },
  };
  const a = await startGateway(t, dir, config, 'node-a');
  let b: GatewayProcess | undefined = PG_URL ? await startGateway(t, dir, config, 'node-b') : undefined;
  const act = await (
    await fetch(`${a.url}/v1/activate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  ).json();
  const headers = { authorization: `Bearer ${act.primary_api_key}`, 'content-type': 'application/json' };
  const send = (base: string, n: number) =>
    fetch(`${base}/v1/scheduling/webhook/send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${rx.url}/in`, payload: { n }, idempotency_key: `send-${n}` }),
    });
  const answered = new Map<number, string>();
  let next = 0;
  const killAt = Math.floor(N / 2);
  let killed = false;
  await Promise.all(
    Array.from({ length: 24 }, async () => {
      while (next < N && !killed) {
        const n = next++;
        const res = await send(a.url, n).catch(() => null);
        if (res?.status === 200) answered.set(n, (await res.json()).delivery_id);
        if (answered.size >= killAt && !killed) {
          killed = true;
          a.proc.kill('SIGKILL');
        }
      }
    })
  );
  t.equal(await a.exited, null, 'node A killed -9');
  t.comment(`${answered.size} answered before the kill, ${next} sent`);
  b ??= await startGateway(t, dir, config, 'node-a-restarted');
  const base = b.url;
  const ids = new Map<number, string>();
  let i = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (i < N) {
        const n = i++;
        // 409 idempotency_in_progress while the dead node's claim has not lapsed (1 s).
        await until(`send ${n} answered`, async () => {
          const res = await send(base, n);
          if (res.status === 409) return false;
          if (res.status !== 200) throw new Error(`send ${n}: ${res.status} ${await res.text()}`);
          ids.set(n, (await res.json()).delivery_id);
          return true;
        });
      }
    })
  );
  t.same(
    [...answered].filter(([n, id]) => ids.get(n) !== id),
    [],
    'every retry answers the delivery the first answer named'
  );
  const peek = await openDatabase(dbUrl);
  const rows = await peek.db.selectFrom('webhook_deliveries').select('delivery_id').execute();
  await peek.close();
  const all = new Set(ids.values());
  t.equal(all.size, N, 'one delivery a key');
  t.equal(rows.length, N, `${N} delivery rows, no second one for a key`);
  await until(`all ${N} delivered`, () => new Set(rx.hits.map((h) => h.headers['webhook-id'])).size >= N, 120_000);
  const seen = new Set(rx.hits.map((h) => h.headers['webhook-id'] as string));
  t.same(
    [...seen].filter((id) => !all.has(id)),
    [],
    'the receiver saw no webhook-id that no answer named'
  );
});
