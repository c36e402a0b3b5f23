import t from 'tap';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Checkpointer } from '../../../core/sqlite/checkpointer.js';

// SQLite only: the checkpointer belongs to a SQLite file's connection.

function fresh(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ckpt-'));
  const file = join(dir, 'gateway.sqlite');
  const conn = new SQLite(file);
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('wal_autocheckpoint = 0'); // only the checkpointer moves frames here
  conn.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)');
  t.teardown(() => {
    if (conn.open) conn.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const insert = conn.prepare('INSERT INTO rows (body) VALUES (?)');
  const write = (n: number) => {
    for (let i = 0; i < n; i++) insert.run('x'.repeat(2000)); // one commit, about a page, each
  };
  return { file, conn, write };
}

t.test('a small WAL is checkpointed in place, without a thread', async (t) => {
  const { file, conn, write } = fresh(t);
  const ck = new Checkpointer(file, conn, { everyMs: 0 });
  t.teardown(() => ck.close());
  write(20);
  const r = await ck.tick();
  t.equal(r?.on, 'main');
  t.ok(r!.log >= 20, `the WAL held the commits (${r?.log} frames)`);
  t.equal(r!.checkpointed, r!.log, 'every frame copied into the database file');
});

t.test(
  'past the threshold checkpoints move to a worker with its own connection; writes go on meanwhile and nothing is lost',
  async (t) => {
    const { file, conn, write } = fresh(t);
    const ck = new Checkpointer(file, conn, { everyMs: 0, workerAboveBytes: 64 * 1024 });
    write(100);
    t.ok(statSync(`${file}-wal`).size > 64 * 1024, 'the WAL grew past the threshold');
    const first = await ck.tick();
    t.equal(first?.on, 'worker');
    t.ok(first!.log >= 100);
    t.equal(first!.checkpointed, first!.log);
    // A commit while the worker checkpoints: a PASSIVE checkpoint takes no lock a writer needs.
    const running = ck.tick();
    write(30);
    const second = await running;
    t.equal(second?.on, 'worker', 'the worker stays once started');
    t.equal(await ck.tick().then((r) => r?.on), 'worker');
    await ck.close();
    t.equal(await ck.tick(), undefined, 'closed: nothing more');
    conn.close();
    const again = new SQLite(file, { readonly: true });
    t.teardown(() => again.close());
    t.equal(
      (again.prepare('SELECT count(*) AS n FROM rows').get() as { n: number }).n,
      130,
      'every row is there after reopening'
    );
  }
);

t.test('one checkpoint at a time, and none inside an open transaction', async (t) => {
  const { file, conn, write } = fresh(t);
  const ck = new Checkpointer(file, conn, { everyMs: 0 });
  t.teardown(() => ck.close());
  write(5);
  conn.exec('BEGIN IMMEDIATE');
  t.equal(await ck.tick(), undefined, 'in place, a transaction of the gateway is never interrupted');
  conn.exec('COMMIT');
  const big = new Checkpointer(file, conn, { everyMs: 0, workerAboveBytes: 1 });
  t.teardown(() => big.close());
  const a = big.tick();
  t.equal(await big.tick(), undefined, 'a second tick while one runs does nothing');
  t.equal((await a)?.on, 'worker');
});

t.test('a worker that cannot open the file leaves checkpoints in place for good', async (t) => {
  const { file, conn, write } = fresh(t);
  // The worker opens `file` with fileMustExist: a path that is not there makes it fail. (A
  // threshold below zero starts the worker whatever the missing file's WAL measures.)
  const ck = new Checkpointer(`${file}.gone`, conn, { everyMs: 0, workerAboveBytes: -1 });
  t.teardown(() => ck.close());
  write(5);
  t.equal(await ck.tick(), undefined, 'the failed checkpoint reports nothing');
  const r = await ck.tick();
  t.equal(r?.on, 'main', 'then the next one runs in place');
});
