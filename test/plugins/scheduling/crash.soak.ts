import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../core/db/open.js';
import { freshDatabaseUrl } from '../../helpers/app.js';
import { startGateway } from '../../helpers/gateway-process.js';
import { accountSecret, receiver, verify, type Reply } from './receiver.js';
import { buildApp } from '../../../core/app.js';
import { loadConfig } from '../../../config/load.js';
import { until } from '../../helpers/wait.js';

const N = Number(process.env.SVC_CRASH_DELIVERIES ?? 10_000);
// Two real gateway processes and 10,000 HTTP calls: longer than the suite's per-file default.
t.setTimeout(300_000);

t.test(
  `kill -9 with ${N} webhook deliveries pending: after a restart each arrives, duplicates under 1 %`,
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const dbUrl = await freshDatabaseUrl(t, dir);
    // Until the kill the receiver answers nothing: every delivery is pending (a few in flight).
    let hold = true;
    const held: (() => void)[] = [];
    const rx = await receiver(t, () =>
      hold ? new Promise<Reply>((r) => held.push(() => r({ status: 200 }))) : { status: 200 }
    );
    const config = {
      data_dir: dir,
      database: { url: dbUrl },
      egress: { allow_private: true },
      jobs: { poll_ms: 50, lease_ms: 2000 },
      limits: { activate_per_hour: 1000 },
      tiers: { free: { rate_per_minute: 100_000_000, burst: 10_000_000, price_usd: 0 } },
      plugins: {
        scheduling: {
          concurrency: 32,
          delivery_timeout_seconds: 120,
          retry_schedule_seconds: [0, 0.2, 0.5, 1, 1, 1, 1, 1, 1, 1],
        },
      },
    };
    const first = await startGateway(t, dir, config, 'first');
    const act = await (
      await fetch(`${first.url}/v1/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).json();
    const headers = { authorization: `Bearer ${act.primary_api_key}`, 'content-type': 'application/json' };
    const t0 = Date.now();
    const sent = new Set<string>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (next < N) {
          const n = next++;
          const res = await fetch(`${first.url}/v1/scheduling/webhook/send`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ url: `${rx.url}/in`, payload: { n } }),
          });
          if (res.status !== 200) throw new Error(`send ${n}: ${res.status} ${await res.text()}`);
          sent.add((await res.json()).delivery_id);
        }
      })
    );
    t.equal(sent.size, N);
    const started = Date.now();
    t.comment(`sent ${N} in ${started - t0} ms`);
    await until('deliveries in flight', () => rx.hits.length >= 32, 30_000);

    first.proc.kill('SIGKILL');
    t.equal(await first.exited, null, 'killed, not exited');
    t.equal(first.proc.signalCode, 'SIGKILL');
    const inFlight = rx.hits.length;
    hold = false;
    for (const release of held.splice(0)) release(); // their sockets are dead: the answers go nowhere

    const peek = await openDatabase(dbUrl);
    const pending = await peek.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('kind', '=', 'scheduling.webhook')
      .where('state', 'in', ['queued', 'running'])
      .executeTakeFirst();
    await peek.close();
    t.equal(Number(pending!.n), N, `all ${N} deliveries pending at the kill (${inFlight} of them in flight)`);

    const second = await startGateway(t, dir, config, 'second');
    await until(`all ${N} delivered`, () => new Set(rx.hits.map((h) => h.headers['webhook-id'])).size >= N, 100_000);
    t.comment(`delivered after the restart in ${Date.now() - started} ms`);
    const ids = new Set(rx.hits.map((h) => h.headers['webhook-id'] as string));
    t.same(
      [...sent].filter((id) => !ids.has(id)),
      [],
      'none lost'
    );
    t.equal([...ids].filter((id) => !sent.has(id)).length, 0, 'nothing that was not sent');
    const duplicates = rx.hits.length - ids.size;
    t.ok(duplicates / N < 0.01, `duplicates ${duplicates} of ${N} (${((100 * duplicates) / N).toFixed(2)} %)`);
    t.ok(duplicates <= inFlight, 'only deliveries in flight at the kill were repeated');

    // Every delivery verifies with the account's secret (the same on both runs).
    second.proc.kill('SIGTERM');
    t.equal(await second.exited, 0, 'a SIGTERM shuts down cleanly');
    const app = await buildApp(loadConfig({ object: { ...config, log: { level: 'silent' } }, env: {} }));
    t.teardown(() => app.close());
    const secret = await accountSecret(app, { authorization: headers.authorization });
    let bad = 0;
    for (const h of rx.hits) {
      try {
        verify(secret, h);
      } catch {
        bad++;
      }
    }
    t.equal(bad, 0, 'standardwebhooks verifies every delivery');
  }
);
