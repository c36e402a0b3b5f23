// database-independent: the adapter alone, files under a temp dir
import t from 'tap';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import smsCapture from '../../../vendors/sms-capture/index.js';
import { classifyGeneric } from '../../../core/router/failure.js';
import { vendorContext } from '../../helpers/vendor-context.js';

const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });

t.test('kept once a message id, as a private file, read back by id', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sms-capture-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const caps = (await smsCapture.create({ dir: '' }, { ...vendorContext('sms-capture'), dataDir: dir }))
    .capabilities as Record<string, any>;
  t.ok(caps['sms.send'].idempotencyKeys, 'declares that a resend with the same id does not act again');
  const input = { to: '+14155550100', body: '😀 hi', from: 'Acme', idempotency_key: 'sms_abc' };
  const out = await caps['sms.send'].invoke(input, opts());
  t.same(out, { vendor_message_id: 'sms_abc', segments: 1 });
  t.equal(caps['sms.send'].price(input, out), 0);
  const again = await caps['sms.send'].invoke({ ...input, body: 'changed' }, opts());
  t.same(again, out);
  const files = readdirSync(join(dir, 'sms-capture'));
  t.same(files, ['sms_abc.json'], 'one file, no temp left');
  t.equal(statSync(join(dir, 'sms-capture', files[0])).mode & 0o777, 0o600);
  const kept = await caps['sms.capture.read'].invoke({ idempotency_key: 'sms_abc' }, opts());
  t.match(kept, { id: 'sms_abc', to: '+14155550100', from: 'Acme', body: '😀 hi', segments: 1, captured_at: /Z$/ });
  t.equal(await caps['sms.capture.read'].invoke({ idempotency_key: 'sms_none' }, opts()), null);
  const bad = await caps['sms.send'].invoke({ ...input, idempotency_key: '../x' }, opts()).catch((e: unknown) => e);
  t.equal(classifyGeneric(bad), 'client_error', 'an id that could leave the directory is refused');
});
