import { join, resolve, sep } from 'node:path';
import { keyProblem, bucketNameProblem } from '../../core/kit/vendor.js';

// How keys become paths under <data_dir>/objects/<account>/<bucket>/.
//
// Each "/"-separated segment of a key is one directory level. A segment is escaped so that
// only [a-z0-9._-] stay as they are and every other byte becomes %XX (upper-case hex): the
// result is the same on case-insensitive file systems (no raw upper case letters), has no
// separators, and cannot be "." or "..". A suffix says what a name is: `.d` a key segment
// followed by "/", `.o` the object's metadata file (the commit point), `.p` a piece of a
// segment too long for one file name, `.<version>.v` the object's bytes. So the keys `a`
// and `a/b` (a file and a directory in a naive layout) live side by side as `a.o` and `a.d/b.o`.

const PIECE = 200; // escaped characters a file name holds, leaving room for suffixes (255 max)

const PLAIN = /^[a-z0-9._-]*$/;

function escapeSegment(seg: string): string {
  if (PLAIN.test(seg)) return seg; // nothing to escape (most key segments)
  let out = '';
  for (const byte of Buffer.from(seg, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[a-z0-9._-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Split an escaped segment into file-name-sized pieces, never inside a %XX escape. */
function pieces(escaped: string): string[] {
  const out: string[] = [];
  let rest = escaped;
  while (rest.length > PIECE) {
    let cut = PIECE;
    const pct = rest.lastIndexOf('%', cut - 1);
    if (pct > cut - 3) cut = pct;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}

export interface ObjectPaths {
  /** Directory holding the object's files. */
  dir: string;
  /** Metadata file (JSON); its rename commits a put. */
  meta: string;
  /** Name stem of the object's data files: `${stem}.${version}.v`. */
  stem: string;
}

export class Layout {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = resolve(dataDir, 'objects');
  }

  /** Bucket directories already worked out: every object path starts with one. */
  private readonly bucketDirs = new Map<string, string>();

  bucketDir(account: string, bucket: string): string {
    const id = `${account}/${bucket}`;
    const known = this.bucketDirs.get(id);
    if (known) return known;
    const dir = this.checkedBucketDir(account, bucket);
    if (this.bucketDirs.size >= 10_000) this.bucketDirs.clear();
    this.bucketDirs.set(id, dir);
    return dir;
  }

  private checkedBucketDir(account: string, bucket: string): string {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(account)) throw new Error(`local-storage: invalid account id "${account}"`);
    if (bucketNameProblem(bucket)) throw new Error(`local-storage: invalid bucket name "${bucket}"`);
    return join(this.root, escapeSegment(account), bucket);
  }

  tmpDir(account: string, bucket: string): string {
    return join(this.bucketDir(account, bucket), '.tmp');
  }

  /** Refuse an account, bucket or key that has no place under the root; the bucket's directory otherwise. */
  check(account: string, bucket: string, key: string): string {
    const problem = keyProblem(key);
    if (problem) throw new Error(`local-storage: key ${problem}`);
    return this.bucketDir(account, bucket);
  }

  objectPaths(account: string, bucket: string, key: string): ObjectPaths {
    const base = this.check(account, bucket, key);
    const segs = key.split('/');
    const names: string[] = [];
    segs.forEach((seg, i) => {
      const ps = pieces(escapeSegment(seg));
      for (const p of ps.slice(0, -1)) names.push(`${p}.p`);
      names.push(ps[ps.length - 1] + (i === segs.length - 1 ? '' : '.d'));
    });
    const last = names.pop()!;
    const dir = join(base, ...names);
    // Belt and braces: the escaping above already makes this impossible.
    if (!(dir === base || dir.startsWith(base + sep))) throw new Error('local-storage: key escapes the bucket');
    return { dir, meta: join(dir, `${last}.o`), stem: join(dir, last) };
  }
}

/**
 * What a directory entry contributes to the key, still escaped (a piece may end inside a
 * multi-byte character, so only a whole key is unescaped, with `decodeKey`).
 */
export function entryPart(name: string): { text: string; kind: 'dir' | 'piece' | 'object' } | undefined {
  if (name.endsWith('.d')) return { text: `${name.slice(0, -2)}/`, kind: 'dir' };
  if (name.endsWith('.p')) return { text: name.slice(0, -2), kind: 'piece' };
  if (name.endsWith('.o')) return { text: name.slice(0, -2), kind: 'object' };
  return undefined;
}

export function decodeKey(escaped: string): string {
  return decodeURIComponent(escaped);
}
