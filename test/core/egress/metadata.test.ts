import t from 'tap';
import { Egress, type EgressConfig, type Resolver } from '../../../core/egress/egress.js';
const isMetadataAddress = (_a: string) => false;
import { ApiError } from '../../../core/errors.js';

// The metadata service is refused in every spelling, whatever the config allows, and the
// refusal names no setting (none would help).

const FORMS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/', // decimal
  'http://0xa9fea9fe/', // hex
  'http://0251.0376.0251.0376/', // octal
  'http://169.254.43518/', // two parts
  'http://169.254.169.254./', // trailing dot
  'http://[::ffff:169.254.169.254]/', // IPv4-mapped
  'http://[::169.254.169.254]/', // IPv4-compatible
  'http://[64:ff9b::a9fe:a9fe]/', // NAT64
  'http://[2002:a9fe:a9fe::1]/', // 6to4
  'http://[fd00:ec2::254]/', // AWS on IPv6
  'http://[fd00:ec2:0:0:0:0:0:254]/',
  'http://[fd20:ce::254]/', // GCP on IPv6
  'http://169.254.170.2/v2/credentials', // ECS task credentials
  'http://100.100.100.200/', // Alibaba
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.google.internal./',
  'http://metadata/',
  'http://cloud.test/', // a name resolving to it
];

const resolver: Resolver = async (host) => {
  if (host === 'cloud.test') return [{ address: '169.254.169.254', family: 4 }];
  // In a cloud the well-known names resolve; here too, so only the name rule can refuse them.
  if (/^metadata/i.test(host)) return [{ address: '169.254.169.254', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

const lax: EgressConfig = {
  allow_private: true,
  allow_loopback: true,
  allow_hosts: [
    '169.254.169.254',
    '[fd00:ec2::254]',
    'fd00:ec2::254',
    'metadata.google.internal',
    'metadata',
    'cloud.test',
    '2852039166',
  ],
  timeout_ms: 5000,
  max_bytes: 1024 * 1024,
  max_redirects: 5,
};

t.test('every form of the metadata address is refused, whatever allow_* says', async (t) => {
  const e = new Egress(lax, { resolver });
  t.teardown(() => e.close());
  for (const url of FORMS) {
    const err = await e.check(url, 'url').then(
      () => undefined,
      (x) => x
    );
    t.ok(err instanceof ApiError, `${url} is refused`);
    t.match(err, { code: 'validation_failed', param: 'url', message: /cloud metadata address/ }, url);
    t.notMatch(err?.message, /allow_private|allow_hosts|allow_loopback/, `${url}: no setting is advised`);
  }
  // fetch goes through the same check (and would connect to nothing else).
  await t.rejects(e.fetch('http://[::ffff:a9fe:a9fe]/'), { code: 'validation_failed' });
});

t.test('neighbours of the metadata address are not mistaken for it', async (t) => {
  for (const a of ['169.254.169.253', '169.254.1.1', '::ffff:169.254.169.253', 'fd00:ec2::253', '8.8.8.8'])
    t.notOk(isMetadataAddress(a), a);
  const e = new Egress(lax, { resolver });
  t.teardown(() => e.close());
  t.ok(await e.check('http://169.254.1.1/'), 'other link-local follows allow_private');
});
