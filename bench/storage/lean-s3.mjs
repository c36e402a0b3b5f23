// A lean S3 PutObject client for the small-object bench: SigV4 header auth with a signed
// SHA-256 payload, the signing key derived once a day, keep-alive sockets. The AWS SDK
// spends a few hundred µs of CPU a request building and signing it; on a 2-core machine
// that client cost, not the servers, would set the rate. Both servers get the same client.
import { createHash, createHmac } from 'node:crypto';
import { Agent, request } from 'node:http';

const hmac = (key, data) => createHmac('sha256', key).update(data).digest();
const amzDate = (ms) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

export function leanS3({ endpoint, region, accessKeyId, secret, sockets = 16 }) {
  const url = new URL(endpoint);
  const base = url.pathname.replace(/\/+$/, '');
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  let day = '';
  let signingKey;
  const put = (bucket, key, body) =>
    new Promise((resolve, reject) => {
      const amz = amzDate(Date.now());
      if (amz.slice(0, 8) !== day) {
        day = amz.slice(0, 8);
        signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), 's3'), 'aws4_request');
      }
      const path = `${base}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
      const hash = createHash('sha256').update(body).digest('hex');
      const scope = `${day}/${region}/s3/aws4_request`;
      const canonical = `PUT\n${path}\n\nhost:${url.host}\nx-amz-content-sha256:${hash}\nx-amz-date:${amz}\n\nhost;x-amz-content-sha256;x-amz-date\n${hash}`;
      const toSign = `AWS4-HMAC-SHA256\n${amz}\n${scope}\n${createHash('sha256').update(canonical).digest('hex')}`;
      const signature = createHmac('sha256', signingKey).update(toSign).digest('hex');
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: 'PUT',
          path,
          agent,
          headers: {
            'content-length': body.length,
            'content-type': 'application/octet-stream',
            'x-amz-date': amz,
            'x-amz-content-sha256': hash,
            authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${signature}`,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${path}: ${res.statusCode}`))
          );
        }
      );
      req.on('error', reject);
      req.end(body);
    });
  return { put, destroy: () => agent.destroy() };
}
