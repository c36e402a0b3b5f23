import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { makeApp, activate, freshDatabaseUrl, DIALECT } from '../../helpers/app.js';
import { loadConfig } from '../../../config/load.js';
import { openDatabase } from '../../../core/db/open.js';
import { migrateModule } from '../../../core/db/migrate.js';
import { coreModules } from '../../../core/db/core-modules.js';
import { JobsEngine } from '../../../core/jobs/engine.js';
import { schedulingMigrations } from '../../../plugins/scheduling/migrations.js';
import { DeliverySecrets } from '../../../plugins/scheduling/delivery-secrets.js';
import { FAST, receiver, verify } from './receiver.js';
import { until } from '../../helpers/wait.js';

const OWN_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const KEY_PART = OWN_SECRET.slice('whsec_'.length);
const TOKEN = 'Bearer receiver-token-3f9a1c77d2';

t.test("a delivery's own secret and headers are sealed at rest, never shown, and still sign and send", async (t) => {
  const { app, dir } = await makeApp(t, FAST);
  const a = await activate(app);
  const rx = await receiver(t);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/scheduling/webhook/send',
    headers: a.auth,
    payload: {
      url: `${rx.url}/in`,
      payload: { n: 1 },
      secret: OWN_SECRET,
      headers: { Authorization: TOKEN, 'X-Tenant': 'acme' },
    },
  });
  t.equal(res.statusCode, 200);
  const id = res.json().delivery_id;
  await rx.waitFor(1);
  t.same(verify(OWN_SECRET, rx.hits[0]), { n: 1 }, "signed with the delivery's own secret");
  t.equal(rx.hits[0].headers.authorization, TOKEN, 'the headers are sent');
  t.equal(rx.hits[0].headers['x-tenant'], 'acme');

  const row = await app.svc.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('delivery_id', '=', id)
    .executeTakeFirstOrThrow();
  const raw = JSON.stringify(row);
  for (const s of [OWN_SECRET, KEY_PART, TOKEN, 'receiver-token', 'acme', 'X-Tenant'])
    t.notOk(raw.includes(s), `the stored row holds no ${s}`);
  t.match(row.secret, /^v1\./);
  t.match(row.headers, /^v1\./);
  if (DIALECT === 'sqlite') {
    // Every byte of the database, WAL included: no other table kept a copy.
    const files = readdirSync(dir).filter((f) => f.startsWith('gateway.db'));
    const bytes = Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
    for (const s of [KEY_PART, 'receiver-token'])
      t.equal(bytes.indexOf(s), -1, `no ${s} anywhere in ${files.join(', ')}`);
  }

  const get = () => app.inject({ method: 'GET', url: `/v1/scheduling/webhook/deliveries/${id}`, headers: a.auth });
  await until('delivered', async () => (await get()).json().state === 'delivered');
  const one = await get();
  const list = await app.inject({ method: 'GET', url: '/v1/scheduling/webhook/deliveries', headers: a.auth });
  t.equal(list.json().items.length, 1);
  for (const body of [one.body, list.body]) {
    for (const s of [KEY_PART, 'receiver-token', 'acme']) t.notOk(body.includes(s), `no ${s} in a response`);
    t.notOk(/"(secret|headers)"/.test(body), 'neither field is shown');
  }
});

t.test('rows stored in plaintext by an older version are sealed at start and still delivered', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-legacy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = await freshDatabaseUrl(t, dir);
  const rx = await receiver(t);
  // What the previous version wrote: the table as migrated then, the secret and headers in clear.
  const database = await openDatabase(url);
  for (const m of coreModules) await migrateModule(database, m.name, m.migrations);
  await migrateModule(database, 'scheduling', schedulingMigrations);
  const now = Date.now();
  await database.db
    .insertInto('webhook_deliveries')
    .values({
      delivery_id: 'dlv_legacy1',
      account_id: 'acc_legacy',
      url: `${rx.url}/old`,
      payload: '{"old":true}',
      event_type: null,
      headers: JSON.stringify({ Authorization: TOKEN }),
      secret: OWN_SECRET,
      state: 'pending',
      max_attempts: 3,
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const jobs = new JobsEngine(
    database.db,
    database.dialect,
    loadConfig({ object: {}, env: {} }).jobs,
    pino({ level: 'silent' })
  );
  const job = {
    kind: 'scheduling.webhook',
    id: 'dlv_legacy1',
    payload: { delivery_id: 'dlv_legacy1' },
    runAt: now,
    maxAttempts: 3,
  };
  await jobs.enqueue(job);
  await database.close();

  const { app } = await makeApp(t, { ...FAST, database: { url } });
  const row = await app.svc.db
    .selectFrom('webhook_deliveries')
    .select(['secret', 'headers'])
    .where('delivery_id', '=', 'dlv_legacy1')
    .executeTakeFirstOrThrow();
  t.match(row.secret, /^v1\./, 'the secret is sealed');
  t.match(row.headers, /^v1\./, 'the headers are sealed');
  t.notOk(
    JSON.stringify(row).includes(KEY_PART) || JSON.stringify(row).includes('receiver-token'),
    'no plaintext left'
  );
  await rx.waitFor(1);
  t.same(verify(OWN_SECRET, rx.hits[0]), { old: true }, 'the sealed secret still signs');
  t.equal(rx.hits[0].headers.authorization, TOKEN, 'the sealed headers are still sent');
  const applied = await app.svc.db
    .selectFrom('svc_migrations')
    .select('name')
    .where('module', '=', 'scheduling-sealed')
    .execute();
  t.same(
    applied.map((r) => r.name),
    ['0001_seal_delivery_credentials'],
    'recorded once, like any migration'
  );
});

t.test('a fresh database has nothing to seal, and start says nothing about sealing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-fresh-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const database = await openDatabase(await freshDatabaseUrl(t, dir));
  t.teardown(() => database.close());
  for (const m of coreModules) await migrateModule(database, m.name, m.migrations);
  await migrateModule(database, 'scheduling', schedulingMigrations);
  const secrets = new DeliverySecrets(Buffer.alloc(32, 3));
  t.equal(await secrets.sealPlaintextRows(database.db, database.dialect), 0, 'no rows sealed');
  t.equal(await secrets.sealPlaintextRows(database.db, database.dialect), 0, 'and none the second time');
});
