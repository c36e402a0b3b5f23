import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import * as capabilities from '../../core/capabilities/index.js';
import * as define from '../../core/define.js';
import aiArea from '../../plugins/ai/index.js';
import storageArea from '../../plugins/storage/index.js';
import accountArea from '../../plugins/account/index.js';

// `svc-gateway/capabilities` resolves to dist/, which a test run does not build: the index is
// checked from source, and the package's export is checked to point at the compiled index.
const root = new URL('../../', import.meta.url);

t.test('the package exports the capabilities index', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
  t.equal(pkg.exports['./capabilities'], './dist/core/capabilities/index.js');
  t.ok(existsSync(new URL('core/capabilities/index.ts', root)));
});

t.test('every name the index exports is there, with the plugin API of define', async (t) => {
  for (const [name, value] of Object.entries(capabilities)) t.not(value, undefined, name);
  const index = capabilities as Record<string, unknown>;
  for (const [name, value] of Object.entries(define)) t.equal(index[name], value, name);
  const helpers = [
    'capability',
    'capabilities',
    'resolveRange',
    'etagListed',
    'keyProblem',
    'bucketNameProblem',
    'prefixProblem',
    'compareKeys',
    'rolledUp',
    'presignUrl',
    'responseQuery',
    'signingKey',
    'stringToSign',
    'hmacHex',
    'amzDate',
    'defineVendor',
    'defineArea',
    'VendorFailure',
  ];
  for (const name of helpers) t.type(index[name], 'function', name);
  t.ok(Array.isArray(capabilities.TTS_FORMATS));
  t.type(capabilities.TTS_MIME.mp3, 'string');
  t.equal(capabilities.BATCH_CANCEL_CAPABILITY, 'ai.chat.batch.cancel');
});

t.test('each descriptor is named by its key and says whether it is idempotent', async (t) => {
  const domains = {
    ai: capabilities.AI_CAPABILITIES,
    storage: capabilities.STORAGE_CAPABILITIES,
    payments: capabilities.PAYMENTS_CAPABILITIES,
  };
  for (const [domain, caps] of Object.entries(domains)) {
    t.ok(Object.keys(caps).length > 0, domain);
    for (const [key, c] of Object.entries(caps)) {
      t.equal(c.name, key);
      t.ok(key.startsWith(`${domain}.`), key);
      t.type(c.idempotent, 'boolean', key);
      t.type(c.description, 'string', key);
    }
  }
});

t.test('the built-in areas declare the descriptors of core', async (t) => {
  t.equal(aiArea.capabilities, capabilities.AI_CAPABILITIES);
  t.equal(storageArea.capabilities, capabilities.STORAGE_CAPABILITIES);
  t.equal(accountArea.capabilities, capabilities.PAYMENTS_CAPABILITIES);
  t.equal(capabilities.AI_CAPABILITIES['ai.chat.batch'].idempotent, false);
  t.equal(capabilities.PAYMENTS_CAPABILITIES['payments.checkout'].idempotent, false);
  t.equal(capabilities.STORAGE_CAPABILITIES['storage.object.put'].idempotent, false);
});
