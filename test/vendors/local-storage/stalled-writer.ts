// Child process of temp-sweep.test.ts: starts a large put whose body stops half way (its temp
// file written and open), tells the parent, and waits to be killed.
import { PassThrough } from 'node:stream';
import { readdirSync } from 'node:fs';
import { FileStore } from '../../../vendors/local-storage/store.js';
import { Layout } from '../../../vendors/local-storage/layout.js';

const dir = process.env.SVC_STALLED_WRITER_DIR;
if (dir && process.send) {
  const layout = new Layout(dir);
  const store = new FileStore(layout, { fsync: false });
  await store.createBucket('acct_crash', 'stalled');
  const body = new PassThrough();
  void store
    .put({ account: 'acct_crash', bucket: 'stalled', key: 'big', body, content_type: 'application/octet-stream' })
    .catch(() => undefined);
  body.write(Buffer.alloc(3 * 1024 * 1024, 1)); // past the inline size and a write batch: a temp file
  const tmp = layout.tmpDir('acct_crash', 'stalled');
  const wait = setInterval(() => {
    if (readdirSync(tmp).length) {
      clearInterval(wait);
      process.send!('ready');
    }
  }, 20);
}
