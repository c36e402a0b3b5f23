import { apiError } from '../../core/errors.js';
import type { PresignPostOutput } from './contract.js';
import type { BucketRow, StorageService } from './service.js';

const CAPABILITY = 'storage.object.presign_post';

/**
 * A browser form upload (S3 POST policy) straight to the bucket's vendor, for vendors whose
 * presigned URLs bypass the gateway (s3, minio): the policy's content-length-range carries
 * the tier's cap as it stands now (object cap, or the room left under the total cap), and
 * the vendor refuses a bigger file. local-storage buckets upload through the gateway's own
 * endpoint, which caps PUTs as they stream, so they offer PUT only.
 */
export async function presignPost(storage: StorageService, b: BucketRow, key: string, expiresSeconds: number) {
  const vendor = storage.svc.vendors.get(b.vendor);
  if (!vendor || !(CAPABILITY in vendor.instance.capabilities)) {
    const message = `is not offered by this bucket's vendor (${vendor?.adapter ?? b.vendor}); use PUT, which the gateway caps as the upload streams`;
    throw apiError('validation_failed', `method POST (a form upload) ${message}.`, { param: 'method', details: { errors: [{ param: 'method', message }] } });
  }
  const cap = await storage.uploadCap(b, key);
  const expiresAt = Date.now() + expiresSeconds * 1000;
  const res = await storage.svc.router.call<unknown, PresignPostOutput>(CAPABILITY, {
    account: b.account_id, bucket: b.name, key, expires_seconds: expiresSeconds, max_bytes: cap.bytes,
  }, { accountId: b.account_id, vendor: b.vendor, charge: false });
  return { ...res.output, maxBytes: cap.bytes, expiresAt };
}
