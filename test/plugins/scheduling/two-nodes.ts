import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabaseUrl, ONE_NODE_ONLY } from '../../helpers/app.js';
import { startGateway } from '../../helpers/gateway-process.js';
import { receiver } from './receiver.js';
import { until } from '../../helpers/wait.js';

import type { Test } from 'tap';

/**
 * Two gateway processes on one database: `MESSAGES` queue messages published through both and a
 * cron job every second for `CRON_SECONDS`; each message is delivered once, each slot fires once.
 * The suite runs a short one (two-nodes.test.ts), `npm run test:soak` the long one (two-nodes.soak.ts).
 */
export function twoNodes(t: Test, MESSAGES: number, CRON_SECONDS: number): void {
  t.test(
    `two gateway processes on one database: ${MESSAGES} queue messages and a cron job every second for ${CRON_SECONDS} s`,
    { skip: ONE_NODE_ONLY },
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-two-'));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      const dbUrl = await freshDatabaseUrl(t, dir);
      const rx = await receiver(t);
      const config = {
        data_dir: dir,
        database: { url: dbUrl },
        egress: { allow_private: true },
        jobs: { poll_ms: 100 },
        limits: { activate_per_hour: 1000 },
        tiers: { free: { rate_per_minute: 100_000_000, burst: 10_000_000, price_usd: 0 } },
        plugins: { scheduling: { concurrency: 32 } },
      };
      // The first runs the migrations; the second starts on the migrated database.
      const a = await startGateway(t, dir, config, 'node-a');
      const b = await startGateway(t, dir, config, 'node-b');
      const act = await (
        await fetch(`${a.url}/v1/activate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).json();
      const headers = { authorization: `Bearer ${act.primary_api_key}`, 'content-type': 'application/json' };
      const post = async (base: string, path: string, body: unknown) => {
        const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
        return res.json();
      };
      await post(a.url, '/v1/scheduling/queue/load/subscriptions', { url: `${rx.url}/queue` });
      const cron = await post(b.url, '/v1/scheduling/cron', {
        name: 'every second',
        schedule: '* * * * * *',
        url: `${rx.url}/cron`,
        payload: { cron: true },
      });
      const cronStart = Date.now();

      const published = new Set<string>();
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async (_, w) => {
          while (next < MESSAGES) {
            const n = next++;
            const r = await post(w % 2 ? a.url : b.url, '/v1/scheduling/queue/publish', {
              queue: 'load',
              payload: { n },
            });
            published.add(r.message_id);
          }
        })
      );
      t.equal(published.size, MESSAGES);
      const wait = cronStart + CRON_SECONDS * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const paused = await fetch(`${a.url}/v1/scheduling/cron/${cron.cron_id}`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify({ enabled: false }),
      });
      t.equal(paused.status, 200);
      const cronEnd = Date.now();
      const runsOf = async () =>
        (await (await fetch(`${b.url}/v1/scheduling/cron/${cron.cron_id}/runs?limit=200`, { headers })).json()).items;
      await until('cron runs settled', async () => (await runsOf()).every((r: any) => r.state === 'succeeded'), 60_000);
      const runs = await runsOf();
      const queueHits = () => rx.hits.filter((h) => h.url === '/queue');
      await until(
        `${MESSAGES} messages pushed`,
        () => new Set(queueHits().map((h) => h.headers['webhook-id'])).size >= MESSAGES,
        200_000
      );
      await new Promise((r) => setTimeout(r, 1000)); // room for any duplicate to show up
      const perMessage = new Map<string, number>();
      for (const h of queueHits())
        perMessage.set(h.headers['webhook-id'] as string, (perMessage.get(h.headers['webhook-id'] as string) ?? 0) + 1);
      t.same(
        [...published].filter((id) => perMessage.get(id) !== 1),
        [],
        'each message delivered exactly once'
      );
      t.equal(queueHits().length, MESSAGES);

      const cronHits = rx.hits.filter((h) => h.url === '/cron');
      const runIds = cronHits.map((h) => h.headers['webhook-id'] as string);
      t.equal(new Set(runIds).size, runIds.length, 'each cron run delivered once');
      t.same(
        runIds.slice().sort(),
        runs.map((r: any) => r.run_id).sort(),
        'what the receiver got is what the runs list shows'
      );
      const slots = runs.map((r: any) => r.scheduled_for);
      t.equal(new Set(slots).size, slots.length, 'each slot fired once');
      const seconds = (cronEnd - cronStart) / 1000;
      t.ok(slots.length <= Math.ceil(seconds) + 1, `${slots.length} runs in ${seconds.toFixed(1)} s`);
      t.ok(
        slots.length >= Math.floor(seconds * 0.8),
        `nearly every slot fired (${slots.length} in ${seconds.toFixed(1)} s; a late tick runs the slots it fell behind)`
      );
    }
  );
}
