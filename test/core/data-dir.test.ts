import t from 'tap';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../../config/load.js';
import { buildApp } from '../../core/app.js';
import { DIALECT } from '../helpers/app.js';
import { activate } from '../plugins/storage/helpers.js';
import { listeningApp } from '../helpers/listening-app.js';
import { createBucket, presign } from '../helpers/storage-api.js';

// database-independent: file modes; on PostgreSQL it checks less (no database file) than on SQLite.

// The usual umask, so that what the gateway creates owes its mode to the gateway.
process.umask(0o022);

const modeOf = (p: string) => (statSync(p).mode & 0o777).toString(8);

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    out.push(p);
    if (lstatSync(p).isDirectory()) walk(p, out);
  }
  return out;
}

t.test('a new data dir is 0700 and everything the gateway writes in it is 0700 or 0600', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-modes-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'new', 'data');
  const database = DIALECT === 'sqlite' ? { database: { url: `sqlite:${join(dir, 'gateway.db')}` } } : {};
  const { app } = await listeningApp(t, { vendors: [], data_dir: dir, ...database });
  const a = await activate(app);
  await app.inject({ method: 'GET', url: '/v1/scheduling/webhook/secret', headers: a.auth });
  await createBucket(app, a, 'files');
  for (const [key, size] of [
    ['small.bin', 100],
    ['large.bin', 200 * 1024],
  ] as const) {
    const put = (await presign(app, a, 'files', key, { method: 'PUT' })).json();
    t.equal((await fetch(put.url, { method: 'PUT', body: Buffer.alloc(size, 1) })).status, 200, `${key} stored`);
  }
  const entries = walk(dir);
  const names = entries.map((p) => p.slice(dir.length + 1));
  t.ok(names.includes('master.key'), 'the master key is there');
  t.ok(
    names.some((n) => n.endsWith('index.db')),
    'the object index is there'
  );
  t.ok(
    names.some((n) => n.endsWith('.v')),
    'a large object has a data file'
  );
  if (DIALECT === 'sqlite') {
    for (const f of ['gateway.db', 'gateway.db-wal', 'gateway.db-shm']) t.ok(names.includes(f), `${f} is there`);
  }
  t.equal(modeOf(dir), '700', 'the data dir');
  t.equal(modeOf(join(root, 'new')), '700', 'and the parent it had to create');
  for (const p of entries) {
    const st = lstatSync(p);
    t.equal((st.mode & 0o777).toString(8), st.isDirectory() ? '700' : '600', p.slice(dir.length + 1));
  }
});

t.test('an existing data dir others can read is tightened to 0700, with a log line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-modes-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  const lines: string[] = [];
  const sink = new Writable({
    write(c, _e, cb) {
      lines.push(String(c));
      cb();
    },
  });
  const config = loadConfig({ object: { data_dir: dir, log: { level: 'warn' } }, env: {} });
  const app = await buildApp(config, { logger: pino({ level: 'warn' }, sink) });
  t.teardown(() => app.close());
  t.equal(modeOf(dir), '700');
  const line = lines.map((l) => JSON.parse(l)).find((l) => /tightened to 700/.test(l.msg));
  t.ok(line, 'the start says so');
  t.match(line, { level: 40, data_dir: dir, mode: '755' });
});
