import { TOKEN_PREFIX } from '../auth/tokens.js';

// Presigned URLs are bearer credentials (S3's for up to 7 days): whoever holds one may use it.
// Request URLs are logged at info, so their signatures are replaced by a marker before a URL
// reaches a log line; the rest (bucket, key, expiry, access key id) stays for debugging. So are
// the gateway's own signed tokens (the add-funds link `/checkout/topup/svt1.…`, session tokens)
// wherever the URL carries them, path or query.

/** Query parameters whose value is a credential: SigV4 and SigV2 signatures, session tokens. */
const SECRET_PARAMS = /^(x-amz-signature|signature|x-amz-security-token)$/i;

export const URL_SECRET_MARKER = '[redacted]';

const SIGNED_TOKEN = new RegExp(`\\b${TOKEN_PREFIX}(?:\\.|%2E)[^/?&#\\s]+`, 'gi');

/** The URL with every signed token and credential-bearing query parameter's value replaced by the marker. */
export function loggableUrl(raw: string): string {
  const url = raw.replace(SIGNED_TOKEN, `${TOKEN_PREFIX}.${URL_SECRET_MARKER}`);
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // a name that is not valid percent-encoding is compared as it is
      }
      return SECRET_PARAMS.test(decoded) ? `${name}=${URL_SECRET_MARKER}` : pair;
    });
  return `${url.slice(0, q)}?${query.join('&')}`;
}
