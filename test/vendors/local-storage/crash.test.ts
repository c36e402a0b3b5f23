import t from 'tap';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import SQLite from 'better-sqlite3';
import { FileStore } from '../../../vendors/local-storage/store.js';
import { Layout } from '../../../vendors/local-storage/layout.js';
import { bodyOf } from './crash-writer.js';
import { runnable } from '../../helpers/runnable.js';

// A process killed (SIGKILL) in the middle of puts: every put it had answered is there, or a
// later put of the same key is; every object reads back whole, with the ETag of its bytes;
// the index is intact. (A crash of the process, not of the machine: what a sync buys against
// power loss cannot be shown from inside it.)
const KILL_AFTER = 150;

t.test('killed mid-put: answered puts survive, no object is torn, the index is intact', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ls-crash-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const child = fork(runnable('./crash-writer.ts', import.meta.url), [], {
    execArgv: process.execArgv,
    env: { ...process.env, SVC_CRASH_WRITER_DIR: dir },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const answered = new Map<string, number>();
  let acks = 0;
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`the writer exited early (${code ?? signal})`))
    );
    child.on('message', (m: 'ready' | { key: string; n: number }) => {
      if (m === 'ready') return;
      answered.set(m.key, m.n);
      // Let it write a while (a count, not a time: a loaded machine writes slower), then kill
      // it a few random milliseconds on, wherever its other puts then are.
      if (++acks === KILL_AFTER) setTimeout(() => child.kill('SIGKILL'), Math.random() * 30);
    });
  });
  t.ok(acks >= KILL_AFTER, `the writer was answered ${acks} times before it was killed`);

  const db = new SQLite(join(dir, 'objects', 'index.db'));
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'the index is intact');
  db.close();

  const store = new FileStore(new Layout(dir));
  t.teardown(() => store.close());
  const listed = await store.list({ account: 'acct_crash', bucket: 'crashes', prefix: '', limit: 1000 });
  const problems: string[] = [];
  for (const [key, n] of answered)
    if (!listed.objects.some((o) => o.key === key)) problems.push(`${key}: answered put ${n} is missing`);
  for (const o of listed.objects) {
    const got = await store.get({ account: 'acct_crash', bucket: 'crashes', key: o.key });
    if (!got || !('body' in got)) {
      problems.push(`${o.key}: listed but not readable`);
      continue;
    }
    const bytes = await buffer(got.body);
    const m = /^put (\d+);/.exec(bytes.subarray(0, 20).toString('latin1'));
    const n = m ? Number(m[1]) : -1;
    if (n < 0 || !bytes.equals(bodyOf(n))) problems.push(`${o.key}: torn or mixed body (${bytes.length} bytes)`);
    else if (o.etag !== `"${createHash('md5').update(bytes).digest('hex')}"`)
      problems.push(`${o.key}: ETag is not its bytes'`);
    else if (n < (answered.get(o.key) ?? -1))
      problems.push(`${o.key}: put ${n} is older than the answered put ${answered.get(o.key)}`);
  }
  t.same(problems, [], `${listed.objects.length} objects checked`);
});
