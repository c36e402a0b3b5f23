import t from 'tap';
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../../vendors/local-storage/store.js';
import { Layout } from '../../../vendors/local-storage/layout.js';
import { tempName } from '../../../vendors/local-storage/temp-sweep.js';
import { runnable } from '../../helpers/runnable.js';

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ls-tmp-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('a put cut off by kill -9 leaves a temp file; the next store to open removes it', async (t) => {
  const dir = tempDir(t);
  const child = fork(runnable('./stalled-writer.ts', import.meta.url), [], {
    execArgv: process.execArgv,
    env: { ...process.env, SVC_STALLED_WRITER_DIR: dir },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('message', () => child.kill('SIGKILL'));
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`the writer exited early (${code ?? signal})`))
    );
  });
  const layout = new Layout(dir);
  const tmp = layout.tmpDir('acct_crash', 'stalled');
  t.equal(readdirSync(tmp).length, 1, 'the crash left the partial upload behind');
  const store = new FileStore(layout);
  t.teardown(() => store.close());
  t.equal(await store.swept, 1);
  t.same(readdirSync(tmp), [], 'gone once a store opened');
});

t.test('only files whose writer is certainly gone are removed (several processes may share a data dir)', async (t) => {
  const dir = tempDir(t);
  const layout = new Layout(dir);
  const live = new FileStore(layout);
  t.teardown(() => live.close());
  await live.createBucket('acct_a', 'bkt');
  const tmp = layout.tmpDir('acct_a', 'bkt');
  const dead = spawnSync(process.execPath, ['-e', '']).pid!; // a process that has exited
  const liveInstance = (live as unknown as { instance: string }).instance;
  const otherHost = (name: string) => name.replace(/^[0-9a-f]{8}/, '00000000');
  const dayAgo = (Date.now() - 25 * 3_600_000) / 1000;
  const files: Record<string, { name: string; old?: boolean; gone: boolean }> = {
    'a closed store of this process': { name: tempName('deadbeef', 'a'), gone: true },
    'a process that died': { name: tempName('deadbeef', 'b').replace(`~${process.pid}~`, `~${dead}~`), gone: true },
    'an open store of this process': { name: tempName(liveInstance, 'c'), gone: false },
    'a live process': { name: tempName('deadbeef', 'd').replace(`~${process.pid}~`, `~${process.ppid}~`), gone: false },
    'another host, recently written': { name: otherHost(tempName('deadbeef', 'e')), gone: false },
    'another host, untouched for a day': { name: otherHost(tempName('deadbeef', 'f')), old: true, gone: true },
    'an older name, recently written': { name: 'lq2x3abcdef0', gone: false },
    'an older name, untouched for a day': { name: 'lq2x3abcdef1', old: true, gone: true },
  };
  for (const f of Object.values(files)) {
    writeFileSync(join(tmp, f.name), 'partial');
    if (f.old) utimesSync(join(tmp, f.name), dayAgo, dayAgo);
  }
  const second = new FileStore(layout);
  t.teardown(() => second.close());
  t.equal(await second.swept, 4);
  const left = new Set(readdirSync(tmp));
  for (const [what, f] of Object.entries(files))
    t.equal(!left.has(f.name), f.gone, `${what}: ${f.gone ? 'removed' : 'kept'}`);
});
