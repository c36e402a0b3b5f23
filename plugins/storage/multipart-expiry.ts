import type { Logger } from 'pino';
import { CLAIM_MS, type UploadRow } from './multipart.js';
import type { BucketRow, StorageService } from './service.js';

const HOUR_MS = 3_600_000;

/**
 * S3's AbortIncompleteMultipartUpload: uploads neither completed nor aborted within
 * `multipart_expire_seconds` are dropped with their parts, so their bytes stop being stored
 * and metered. Every node may sweep: each upload is first claimed with a conditional update,
 * so only one node deletes its parts (two deleting at once could both count the bytes gone).
 */
export class MultipartExpiry {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly storage: StorageService,
    private readonly log: Logger
  ) {}

  private get expireMs(): number {
    return this.storage.config.multipart_expire_seconds * 1000;
  }

  /** A quarter of the expiry, at most an hour: an upload outlives its expiry by that much at most. */
  get intervalMs(): number {
    return Math.min(this.expireMs / 4, HOUR_MS);
  }

  /** Drop every expired upload not claimed by another node; returns how many this call dropped. */
  async sweep(now = Date.now(), batch = 100): Promise<number> {
    const db = this.storage.svc.db;
    let n = 0;
    for (;;) {
      const due = await db
        .selectFrom('storage_multipart_uploads')
        .selectAll()
        .where('created_at', '<=', now - this.expireMs)
        .where((eb) => eb.or([eb('expiry_claimed_at', 'is', null), eb('expiry_claimed_at', '<', now - CLAIM_MS)]))
        .orderBy('created_at')
        .limit(batch)
        .execute();
      for (const r of due) {
        const upload: UploadRow = {
          upload_id: r.upload_id,
          account_id: r.account_id,
          bucket_id: r.bucket_id,
          key: r.key,
          content_type: r.content_type,
          created_at: Number(r.created_at),
        };
        try {
          if (await this.claim(upload.upload_id, now)) {
            await this.drop(upload);
            n++;
          }
        } catch (e) {
          this.log.warn(
            { err: (e as Error).message, upload_id: upload.upload_id },
            'multipart expiry: drop failed; will retry'
          );
        }
      }
      // A failed drop stays claimed, so it is not selected again: the loop ends.
      if (due.length < batch) break;
    }
    await this.storage.multipart.completions.forgetOlder(now - this.expireMs);
    // Written now rather than within the meter's batch delay: the sweep may be all this node does.
    await this.storage.usage.flush();
    return n;
  }

  /** Whether this node won the upload (nobody claimed it, or the claim ran out). */
  private claim(uploadId: string, now: number): Promise<boolean> {
    return this.storage.multipart.claim(uploadId, now, CLAIM_MS);
  }

  private async drop(upload: UploadRow): Promise<void> {
    const mp = this.storage.multipart;
    const bucket = await this.storage.bucketById(upload.bucket_id);
    if (bucket) return mp.drop(bucket, upload);
    // The bucket row is gone (its deletion stopped before its uploads went), and with it the
    // vendor the parts are on: look for them on every storage vendor, then forget the upload.
    for (const v of this.storage.svc.vendors.serving('storage.object.delete')) {
      if (v.byokOnly) continue;
      const stub: BucketRow = {
        bucket_id: upload.bucket_id,
        account_id: upload.account_id,
        name: '',
        vendor: v.id,
        region: this.storage.config.region,
        acl: 'private',
        created_at: 0,
      };
      await mp
        .deleteParts(stub, upload.upload_id)
        .catch((e) =>
          this.log.warn(
            { err: (e as Error).message, upload_id: upload.upload_id, vendor: v.id },
            'multipart expiry: parts of an upload without a bucket not deleted'
          )
        );
    }
    await mp.forget(upload.upload_id);
  }

  /**
   * Sweep now and then every `intervalMs` until stopped; a sweep still running when the next is
   * due is not doubled. Now as well: a gateway restarted more often than the interval (a
   * redeploy a day, an hourly interval) would otherwise never sweep.
   */
  start(): void {
    if (this.timer) return;
    const tick = () => {
      if (this.running) return;
      this.running = this.sweep()
        .then(
          () => undefined,
          (e) => this.log.warn({ err: (e as Error).message }, 'multipart expiry sweep failed')
        )
        .finally(() => {
          this.running = undefined;
        });
    };
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
    tick();
  }

  /** Stop sweeping; a sweep under way is let finish (the database closes after this). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
