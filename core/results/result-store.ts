import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { newId } from '../ids.js';
import { presignedExpiry, signedUntil } from '../clock.js';
import { apiError } from '../errors.js';
import type { Router } from '../router/router.js';
import { isActiveContent } from '../http/content-type.js';
import type { SyncSqlite } from '../db/open.js';

/** Where the results of every account live: one reserved bucket name per account. */
export const RESULTS_BUCKET = 'svc-results';
/**
 * Where results live when the operator made result URLs public: a bucket of its own, so that
 * making it public (or putting a CDN in front of it) never exposes a private result.
 */
export const PUBLIC_RESULTS_BUCKET = 'svc-results-public';

export function isResultsBucket(name: string): boolean {
  return name === RESULTS_BUCKET || name === PUBLIC_RESULTS_BUCKET;
}
const DAY = 86_400;
const MAX_URL_SECONDS = 7 * DAY; // SigV4 presigned URLs live at most 7 days

/** Credentials of the gateway's own S3 endpoint, for storage vendors whose URLs point there. */
export interface ResultSigner {
  endpoint: string;
  region: string;
  access_key_id: string;
  secret: string;
}

/** Where the bytes results occupy are counted as the account's storage (the storage area's meter). */
export interface ResultUsage {
  /** Bytes an account's results occupy moved by `delta` (negative when a result is deleted). */
  stored(accountId: string, delta: number): void;
}

export interface ResultStoreSettings {
  /** Storage vendor instance to write to; default: the first that serves storage. */
  vendor?: string;
  retentionSeconds: number;
  signer?(accountId: string): Promise<ResultSigner>;
  /**
   * Set when the storage area signs result URLs itself, for its own S3 endpoint, whatever
   * the vendor (plugins.storage.presign_through: gateway): downloads of results in a remote
   * bucket then go through the gateway and are metered as served. Unset: the vendor presigns.
   */
  presign?(r: {
    accountId: string;
    bucket: string;
    key: string;
    expiresSeconds: number;
    response: { content_type: string; content_disposition: string };
  }): Promise<string>;
  /**
   * Set when results are public: the unsigned URL of a result saved in PUBLIC_RESULTS_BUCKET
   * (`path` is where the vendor says it put the object, when it says).
   */
  publicUrl?(r: { accountId: string; vendor: string; key: string; path?: string }): string;
  /** Set when something meters storage: results count in it from their save to their deletion. */
  usage?: ResultUsage;
}

export interface SaveOptions {
  contentType: string;
  /** Download name the URL's response carries (Content-Disposition: attachment). */
  filename?: string;
  /** How long the result is kept; default the configured retention (7 days). */
  retentionSeconds?: number;
  /** Lifetime of the returned URL; default as long as the result is kept, at most 7 days (public URLs: until deleted). */
  urlExpiresSeconds?: number;
  /** Serve inline (images shown in a page) instead of as a download. */
  inline?: boolean;
}

export interface SavedResult {
  result_id: string;
  url: string;
  /** Epoch ms when the URL stops working. */
  url_expires_at: number;
  /** Epoch ms when the result is deleted. */
  delete_at: number;
  content_type: string;
  size: number;
}

// The row of a saved result, as one prepared statement on SQLite (the keys of `row` in save(),
// in order): Kysely builds and compiles its query anew each call, ~0.2 ms of the
// event loop an image call under load, where the statement takes a few microseconds.
const INSERT_RESULT =
  'INSERT INTO results (result_id, account_id, vendor, object_key, content_type, filename, size, created_at, '
  + 'delete_at, bucket, vendor_path, content_disposition, counted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

function disposition(filename: string, inline: boolean): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * The one place areas save bytes they hand back as a `*_url` (images, speech, PDFs, video,
 * email attachments): written through the storage vendor the operator configured, kept for a
 * retention period, and served by signed GET URLs with an expiry, a content type and a
 * download name — or, when the operator made results public, by unsigned URLs that work until
 * the result is deleted (capability URLs: result ids are random). The storage area configures it (vendor, retention, URL signer) when it loads.
 */
export class ResultStore {
  private settings: ResultStoreSettings = { retentionSeconds: 7 * DAY };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<any>,
    private readonly router: Router,
    private readonly log: Logger,
    private readonly sync?: SyncSqlite
  ) {}

  configure(settings: ResultStoreSettings): void {
    this.settings = settings;
  }

  async save(accountId: string, body: Buffer | Readable, opts: SaveOptions): Promise<SavedResult> {
    const resultId = newId('res');
    const filename = (opts.filename ?? 'result').replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(0, 200) || 'result';
    const key = `${resultId}/${filename}`;
    const now = Date.now();
    const deleteAt = now + (opts.retentionSeconds ?? this.settings.retentionSeconds) * 1000;
    const stream = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    const isPublic = !!this.settings.publicUrl;
    // A public result carries its download name with it: a plain GET has no query to ask for one.
    const contentDisposition = isPublic ? disposition(filename, !!opts.inline) : undefined;
    const bucket = isPublic ? PUBLIC_RESULTS_BUCKET : RESULTS_BUCKET;
    const put = await this.router.call<unknown, { size: number; path?: string }>(
      'storage.object.put',
      {
        account: accountId,
        bucket,
        key,
        body: stream,
        // A result held whole (an image, a PDF) is handed over as it is: a store may take the
        // bytes without reading a stream of them (local-storage, up to its inline size).
        ...(Buffer.isBuffer(body) ? { data: body } : {}),
        content_type: opts.contentType,
        content_disposition: contentDisposition,
        content_length: Buffer.isBuffer(body) ? body.length : undefined,
        // Its row below is committed without a sync: the object need not wait for one either.
        durable: false,
      },
      { accountId, vendor: this.settings.vendor, charge: false, timeoutMs: 3_600_000 }
    );
    const row = {
      result_id: resultId,
      account_id: accountId,
      vendor: put.vendor,
      object_key: key,
      content_type: opts.contentType,
      filename,
      size: put.output.size,
      created_at: now,
      delete_at: deleteAt,
      bucket,
      vendor_path: put.output.path ?? null,
      content_disposition: contentDisposition ?? null,
      counted: this.settings.usage ? 1 : 0,
    };
    if (this.sync?.free()) this.sync.run(INSERT_RESULT, Object.values(row));
    else await this.db.insertInto('results').values(row).execute();
    this.settings.usage?.stored(accountId, row.size);
    const base = { result_id: resultId, delete_at: deleteAt, content_type: opts.contentType, size: put.output.size };
    if (isPublic)
      return {
        ...base,
        url: this.settings.publicUrl!({ accountId, vendor: put.vendor, key, path: put.output.path }),
        url_expires_at: deleteAt,
      };
    const urlSeconds = opts.urlExpiresSeconds ?? Math.ceil((deleteAt - now) / 1000);
    const { url, expiresAt } = await this.sign(
      accountId,
      put.vendor,
      bucket,
      key,
      opts.contentType,
      filename,
      !!opts.inline,
      urlSeconds
    );
    return { ...base, url, url_expires_at: expiresAt };
  }

  /**
   * A fresh URL for a saved result (404 when it is gone or another account's). A public
   * result's URL is the one it was saved with, valid until the result is deleted.
   */
  async url(
    accountId: string,
    resultId: string,
    expiresSeconds?: number,
    inline = false
  ): Promise<{ url: string; expiresAt: number }> {
    const r = await this.db
      .selectFrom('results')
      .selectAll()
      .where('result_id', '=', resultId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!r || Number(r.delete_at) <= Date.now()) throw apiError('not_found', `No result ${resultId}.`);
    if (r.bucket === PUBLIC_RESULTS_BUCKET && this.settings.publicUrl) {
      return {
        url: this.settings.publicUrl({
          accountId,
          vendor: r.vendor,
          key: r.object_key,
          path: r.vendor_path ?? undefined,
        }),
        expiresAt: Number(r.delete_at),
      };
    }
    const left = Math.ceil((Number(r.delete_at) - Date.now()) / 1000);
    return this.sign(
      accountId,
      r.vendor,
      r.bucket,
      r.object_key,
      r.content_type,
      r.filename,
      inline,
      Math.min(expiresSeconds ?? left, left)
    );
  }

  private async sign(
    accountId: string,
    vendor: string,
    bucket: string,
    key: string,
    contentType: string,
    filename: string,
    inline: boolean,
    seconds: number
  ) {
    const expires = Math.max(1, Math.min(seconds, MAX_URL_SECONDS));
    // A vendor's own URL is served with no check of the gateway's: never ask it to show a page inline.
    const response = {
      content_type: contentType,
      content_disposition: disposition(filename, inline && !isActiveContent(contentType)),
    };
    // The URL's own expiry when it carries one (X-Amz-Date + X-Amz-Expires: exact, whatever
    // second it was signed in); else the start of this second plus the lifetime, never later.
    const fallback = signedUntil(expires);
    const expiring = (url: string) => ({ url, expiresAt: presignedExpiry(url) ?? fallback });
    if (this.settings.presign)
      return expiring(await this.settings.presign({ accountId, bucket, key, expiresSeconds: expires, response }));
    const signer = this.settings.signer ? await this.settings.signer(accountId) : undefined;
    const res = await this.router.call<unknown, { url: string }>(
      'storage.object.presign',
      {
        account: accountId,
        bucket,
        key,
        method: 'GET',
        expires_seconds: expires,
        signer,
        response,
      },
      { accountId, vendor, charge: false }
    );
    return expiring(res.output.url);
  }

  /** Delete results whose retention has run out; returns how many went. */
  async sweep(now = Date.now(), batch = 100): Promise<number> {
    const due = await this.db
      .selectFrom('results')
      .select(['result_id', 'account_id', 'vendor', 'bucket', 'object_key', 'size', 'counted'])
      .where('delete_at', '<=', now)
      .orderBy('delete_at')
      .limit(batch)
      .execute();
    let n = 0;
    for (const r of due) {
      try {
        await this.router.call(
          'storage.object.delete',
          { account: r.account_id, bucket: r.bucket, key: r.object_key },
          { accountId: r.account_id, vendor: r.vendor, charge: false }
        );
        const gone = await this.db.deleteFrom('results').where('result_id', '=', r.result_id).executeTakeFirst();
        // Nodes sweep the same rows: only the one whose delete took the row takes its bytes back.
        if (Number(gone.numDeletedRows) > 0 && Number(r.counted))
          this.settings.usage?.stored(r.account_id, -Number(r.size));
        n++;
      } catch (e) {
        this.log.warn(
          { err: (e as Error).message, result_id: r.result_id },
          'result retention: delete failed; will retry'
        );
      }
    }
    return n;
  }

  /** Sweep every `intervalMs` until stopped (one node or many: deletes are idempotent). */
  start(intervalMs = 60_000): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => void this.sweep().catch((e) => this.log.warn({ err: e }, 'result retention sweep failed')),
      intervalMs
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
