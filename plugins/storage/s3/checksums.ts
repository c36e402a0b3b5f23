import { createHash, type Hash } from 'node:crypto';

// The checksums the AWS SDK sends in trailers and headers (x-amz-checksum-*), computed
// while the body streams, so a corrupted upload is refused before it is committed.

function table(poly: number): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? poly ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

const TABLES = { crc32: table(0xedb88320), crc32c: table(0x82f63b78) };

class Crc {
  private crc = 0xffffffff;
  constructor(private readonly t: Uint32Array) {}
  update(buf: Buffer): void {
    let c = this.crc;
    const t = this.t;
    for (let i = 0; i < buf.length; i++) c = t[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
    this.crc = c;
  }
  digestBase64(): string {
    const out = Buffer.alloc(4);
    out.writeUInt32BE((this.crc ^ 0xffffffff) >>> 0);
    return out.toString('base64');
  }
}

export interface Checksum {
  update(buf: Buffer): void;
  digestBase64(): string;
}

/** A running checksum for an `x-amz-checksum-<name>` header, or undefined for one we do not check. */
export function checksumFor(header: string): Checksum | undefined {
  const name = header.toLowerCase().replace(/^x-amz-checksum-/, '');
  if (name === 'crc32' || name === 'crc32c') return new Crc(TABLES[name]);
  if (name === 'sha1' || name === 'sha256') {
    const h: Hash = createHash(name);
    return { update: (b) => void h.update(b), digestBase64: () => h.digest('base64') };
  }
  return undefined;
}
