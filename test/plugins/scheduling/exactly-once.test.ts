import t from 'tap';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabaseUrl, PG_URL } from '../../helpers/app.js';
import { startGateway } from '../../helpers/gateway-process.js';
import { receiver } from './receiver.js';
import { until } from '../../helpers/wait.js';

// Issue 27: a node killed after a send's delivery row committed but before its idempotent
// answer was stored left a claim that a retry took over and ran again: a second delivery,
// new id, new webhook-id. Here the kill lands exactly there: a trigger makes the statement
// that stores the answer wait on an advisory lock this test holds, the test sees the gateway
// waiting on it, and kills it -9. Every send answers with its answer stored in the same
// transaction (core/http/idempotent-transaction.ts), so the retry on the restarted node runs
// it once: one delivery, one webhook-id. PostgreSQL only: a SQLite statement cannot wait on a
// lock held elsewhere without taking the whole file; exactly-once.soak.ts kills -9 mid-load on
// both databases.
t.setTimeout(120_000);

const LOCK = 727_027;

t.test(
  'kill -9 while a send stores its answer: the retry answers one delivery, delivered once',
  { skip: PG_URL ? false : 'needs PostgreSQL (the kill point is held with an advisory lock)' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-once-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const dbUrl = await freshDatabaseUrl(t, dir);
    const schema = new URL(dbUrl).searchParams.get('schema')!;
    const rx = await receiver(t);
    const config = {
      data_dir: dir,
      database: { url: dbUrl },
      egress: { allow_private: true },
      jobs: { poll_ms: 50, lease_ms: 1000 },
      limits: { idempotency_lease_seconds: 1, activate_per_hour: 1000 },
      plugins: { scheduling: { retry_schedule_seconds: [0, 0.2, 0.5] } },
    };
    const a = await startGateway(t, dir, config, 'node-a');
    const act = await (
      await fetch(`${a.url}/v1/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).json();
    const headers = { authorization: `Bearer ${act.primary_api_key}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ url: `${rx.url}/in`, payload: { n: 1 }, idempotency_key: 'once-1' });

    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    t.teardown(() => c.end());
    await c.query(`create function ${schema}.wait_for_test() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock_shared(${LOCK}); return new; end $$`);
    await c.query(`create trigger wait_for_test before update on ${schema}.idempotency_keys
      for each row when (new.state = 'done') execute function ${schema}.wait_for_test()`);
    await c.query('select pg_advisory_lock($1)', [LOCK]);

    const pending = fetch(`${a.url}/v1/scheduling/webhook/send`, { method: 'POST', headers, body }).catch(() => null);
    await until('the send waits to store its answer', async () => {
      const r = await c.query(
        "select 1 from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'advisory' and pid <> pg_backend_pid()"
      );
      return r.rowCount! > 0;
    });
    a.proc.kill('SIGKILL');
    t.equal(await a.exited, null, 'killed');
    t.equal(await pending, null, 'the client got no answer');
    await c.query(`drop trigger wait_for_test on ${schema}.idempotency_keys`);
    await c.query('select pg_advisory_unlock($1)', [LOCK]);

    const b = await startGateway(t, dir, config, 'node-b');
    let answer: any;
    // 409 idempotency_in_progress until the dead node's claim lapses (its lease, 1 s).
    await until('the retry is answered', async () => {
      const res = await fetch(`${b.url}/v1/scheduling/webhook/send`, { method: 'POST', headers, body });
      if (res.status === 409) return false;
      answer = { status: res.status, body: await res.json() };
      return true;
    });
    t.equal(answer.status, 200);
    const rows = await c.query(`select delivery_id from ${schema}.webhook_deliveries`);
    t.same(
      rows.rows.map((r) => r.delivery_id),
      [answer.body.delivery_id],
      'one delivery: the one the retry answers'
    );
    await rx.waitFor(1);
    const again = await fetch(`${b.url}/v1/scheduling/webhook/send`, { method: 'POST', headers, body });
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    t.same(await again.json(), answer.body, 'a later retry replays it');
    await until(
      'delivered',
      async () => (await c.query(`select state from ${schema}.webhook_deliveries`)).rows[0]?.state === 'delivered'
    );
    t.same(
      rx.hits.map((h) => h.headers['webhook-id']),
      [answer.body.delivery_id],
      'the receiver got it once, under its id'
    );
  }
);
