import { ConfigError } from '../../config/load.js';
import { type VendorRegistry, PUBLIC_RESULTS_BUCKET } from '../../core/kit/area.js';
import type { StorageConfig } from './config.js';

// The embedded vendor whose objects the gateway's own S3 endpoint serves: its public URLs
// need no operator setup, since the endpoint already serves unsigned GETs of public buckets.
const EMBEDDED = 'local-storage';

/** A key or vendor path as URL path segments: each segment percent-encoded, "/" kept. */
function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/**
 * Public result URLs (`results_public`), or undefined when results are private. Checked at
 * boot: a results vendor other than local-storage serves nothing unsigned by itself, so the
 * operator must say where its objects are public (`results_public_base_url`).
 */
export function publicResultUrls(config: StorageConfig, vendors: VendorRegistry, s3Endpoint: string) {
  if (!config.results_public) return undefined;
  const base = config.results_public_base_url;
  const candidates = config.results_vendor
    ? [vendors.get(config.results_vendor)].filter((v) => !!v)
    : vendors.serving('storage.object.put');
  const remote = candidates.filter((v) => v.adapter !== EMBEDDED).map((v) => `"${v.id}" (${v.adapter})`);
  if (remote.length && !base) {
    throw new ConfigError(
      `plugins.storage.results_public: results are written to vendor ${remote.join(', ')}, which serves no unsigned URLs by itself; `
        + 'set plugins.storage.results_public_base_url to where that bucket is public (or a CDN in front of it), or turn results_public off'
    );
  }
  const byId = new Map(candidates.map((v) => [v.id, v.adapter]));
  return ({
    accountId,
    vendor,
    key,
    path,
  }: {
    accountId: string;
    vendor: string;
    key: string;
    path?: string;
  }): string => {
    if (byId.get(vendor) === EMBEDDED)
      return `${base || s3Endpoint}/${accountId}/${PUBLIC_RESULTS_BUCKET}/${encodePath(key)}`;
    // Checked at boot for the configured vendors; a vendor that does not say where it put the object cannot have a public URL.
    if (!path || !base) throw new Error(`vendor "${vendor}" gave no object path for a public result URL`);
    return `${base}/${encodePath(path)}`;
  };
}
