import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Layout } from '../../vendors/local-storage/layout.js';
import { FileStore } from '../../vendors/local-storage/store.js';

/** A local store on a temp directory, closed and removed at teardown. */
export function fresh(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ls-'));
  const store = new FileStore(new Layout(dir));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, store };
}

export const A = 'acct_test1';
export const put = (store: FileStore, key: string, body: string | Buffer, bucket = 'bk1') =>
  store.put({ account: A, bucket, key, body: Readable.from([Buffer.from(body)]), content_type: 'text/plain' });
