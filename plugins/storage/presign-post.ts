import { signedUntil, type PresignPostOutput } from '../../core/kit/area.js';
import type { BucketRow, StorageService } from './service.js';
import { signPostPolicy } from './s3/post-policy.js';

const CAPABILITY = 'storage.object.presign_post';

/**
 * When a form stops working: its policy's `expiration` (a vendor may round it down to the
 * second), or `fallback` for a form whose policy cannot be read.
 */
function policyExpiry(fields: Record<string, string>, fallback: number): number {
  try {
    const doc = JSON.parse(Buffer.from(fields.policy ?? fields.Policy ?? '', 'base64').toString('utf8'));
    const at = Date.parse(doc.expiration);
    return Number.isFinite(at) ? at : fallback;
  } catch {
    return fallback;
  }
}

/**
 * A browser form upload (S3 POST policy) for one key, its policy's content-length-range the
 * tier's cap as it stands now (object cap, or the room left under the total cap). The form
 * posts to the gateway's own S3 endpoint, which checks the policy and caps and meters the
 * file as it streams to the bucket's vendor; with `presign_through: vendor`, a vendor that
 * makes forms of its own (s3, minio) gets the form instead, and the service enforces the cap.
 */
export async function presignPost(storage: StorageService, b: BucketRow, key: string, expiresSeconds: number) {
  const cap = await storage.uploadCap(b, key);
  const fallback = signedUntil(expiresSeconds);
  const vendor = storage.svc.vendors.get(b.vendor);
  if (storage.config.presign_through === 'vendor' && vendor && CAPABILITY in vendor.instance.capabilities) {
    const res = await storage.svc.router.call<unknown, PresignPostOutput>(
      CAPABILITY,
      {
        account: b.account_id,
        bucket: b.name,
        key,
        expires_seconds: expiresSeconds,
        max_bytes: cap.bytes,
      },
      { accountId: b.account_id, vendor: b.vendor, charge: false }
    );
    return { ...res.output, maxBytes: cap.bytes, expiresAt: policyExpiry(res.output.fields, fallback) };
  }
  const cred = await storage.credentials.internal(b.account_id);
  const form = signPostPolicy({
    endpoint: storage.endpoint,
    bucket: b.name,
    key,
    region: storage.config.region,
    accessKeyId: cred.accessKeyId,
    secret: cred.secret,
    expiresSeconds,
    maxBytes: cap.bytes,
  });
  return { ...form, maxBytes: cap.bytes, expiresAt: policyExpiry(form.fields, fallback) };
}
