import { Transform, type TransformCallback } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { chargeMarked, usdToMicros, type Wallet } from '../../core/kit/area.js';
import type { PublicUrlConfigT } from './config.js';
import type { UrlStore } from './store.js';

const GIB = 1024 ** 3;

/** Bytes a second, with a burst of one second: a debt is waited out before the next chunk passes. */
export class ByteBucket {
  private tokens: number;
  private at = Date.now();

  constructor(private readonly rate: number) {
    this.tokens = rate;
  }

  /** Milliseconds to wait before `n` more bytes may pass. */
  take(n: number): number {
    const now = Date.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
    this.tokens -= n;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.rate);
  }
}

/** Counts the bytes that pass and holds them back as the bucket says: a tunnel's bandwidth and metering. */
export class Metered extends Transform {
  constructor(
    private readonly bucket: ByteBucket,
    private readonly count: (n: number) => void
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.count(chunk.length);
    const wait = this.bucket.take(chunk.length);
    if (wait === 0) cb(null, chunk);
    else setTimeout(() => cb(null, chunk), wait);
  }
}

/**
 * Bytes through tunnels: counted in memory, added to each record every few seconds, and charged
 * to the account's wallet each billing interval (price_per_gib_usd, both ways together). Each
 * charge moves `bytes_billed` with a compare-and-set in the debit's transaction (chargeMarked),
 * so two nodes never charge the same bytes. Anonymous tunnels are not charged; their max_bytes
 * caps them.
 */
export class TunnelMeter {
  private readonly pending = new Map<string, { in: number; out: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<any>,
    private readonly wallet: Wallet,
    private readonly urls: UrlStore,
    private readonly cfg: PublicUrlConfigT,
    private readonly log: Logger
  ) {}

  add(urlId: string, inBytes: number, outBytes: number): void {
    const p = this.pending.get(urlId) ?? { in: 0, out: 0 };
    p.in += inBytes;
    p.out += outBytes;
    this.pending.set(urlId, p);
  }

  async flush(): Promise<void> {
    const all = [...this.pending];
    this.pending.clear();
    for (const [urlId, p] of all) await this.urls.addBytes(urlId, p.in, p.out);
  }

  /** Charge every account for its tunnels' unbilled bytes; returns the micro-USD charged. */
  async bill(): Promise<number> {
    await this.flush();
    const perByte = usdToMicros(this.cfg.price_per_gib_usd) / GIB;
    if (perByte <= 0) return 0;
    const rows = await this.db
      .selectFrom('public_urls')
      .select(['url_id', 'account_id', 'bytes_in', 'bytes_out', 'bytes_billed'])
      .where('account_id', 'is not', null)
      .whereRef('bytes_billed', '<', (eb) => eb('bytes_in', '+', eb.ref('bytes_out')))
      .execute();
    let total = 0;
    for (const r of rows) {
      const carried = Number(r.bytes_in) + Number(r.bytes_out);
      const micros = Math.floor((carried - Number(r.bytes_billed)) * perByte);
      if (micros < 1) continue;
      total += await chargeMarked(this.db, this.wallet, this.log, 'tunnel bytes', {
        table: 'public_urls',
        row: { url_id: r.url_id },
        marks: { bytes_billed: Number(r.bytes_billed) },
        next: { bytes_billed: carried },
        accountId: r.account_id,
        micros,
        ref: `public-url:${r.url_id}:${carried}`,
        capability: 'public_url.bytes',
      });
    }
    return total;
  }

  start(): void {
    this.timer ??= setInterval(
      () => void this.bill().catch((e) => this.log.warn({ err: e }, 'tunnel billing failed')),
      this.cfg.billing_interval_seconds * 1000
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush().catch(() => undefined);
  }
}
