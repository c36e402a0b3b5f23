import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type SQLite from 'better-sqlite3';
import { decodeKey, entryPart } from './layout.js';
import type { ObjectRow } from './object-row.js';

// Before the index (object-index.ts), each object's metadata was a file of its own beside its
// data: `<key>.o`, JSON, then for a small object a newline and the bytes. Opening such a
// store for the first time moves every metadata file into the index, in one transaction, and
// then removes the files. Large objects' data files keep their names, which the index's
// rows point at as before. A crash half way leaves the files, and the next open starts again.

/** What a metadata file held: a row's fields, and whether the bytes followed. */
type LegacyMeta = Omit<ObjectRow, 'data'> & { inline?: boolean };

function isNotFound(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function entries(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
}

/** Every `.o` file under a bucket directory, with the key its path spells. */
function* metaFiles(dir: string, escaped: string): Generator<{ path: string; key: string }> {
  for (const ent of entries(dir)) {
    const part = entryPart(ent.name);
    if (!part) continue;
    const path = join(dir, ent.name);
    if (part.kind === 'object') {
      if (ent.isFile()) yield { path, key: decodeKey(escaped + part.text) };
    } else if (ent.isDirectory()) yield* metaFiles(path, escaped + part.text);
  }
}

export function importLegacyObjects(root: string, db: SQLite.Database): number {
  const found: Array<{ path: string; account: string; bucket: string; meta: LegacyMeta; data: Buffer | null }> = [];
  for (const acct of entries(root)) {
    if (!acct.isDirectory()) continue;
    const account = decodeKey(acct.name);
    for (const bkt of entries(join(root, acct.name))) {
      if (!bkt.isDirectory()) continue;
      for (const f of metaFiles(join(root, acct.name, bkt.name), '')) {
        const file = readFileSync(f.path);
        const nl = file.indexOf(10);
        const meta = JSON.parse(file.toString('utf8', 0, nl < 0 ? file.length : nl)) as LegacyMeta;
        const data = meta.inline ? file.subarray(nl + 1) : null;
        found.push({ path: f.path, account, bucket: bkt.name, meta: { ...meta, key: f.key }, data });
      }
    }
  }
  if (!found.length) return 0;
  const put = db.prepare(
    'INSERT OR REPLACE INTO objects (account, bucket, key, size, etag, content_type, last_modified, version, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'
  );
  db.transaction(() => {
    for (const { account, bucket, meta: m, data } of found)
      put.run(account, bucket, m.key, m.size, m.etag, m.content_type, m.last_modified, m.version, data);
  })();
  for (const f of found) unlinkSync(f.path);
  return found.length;
}
