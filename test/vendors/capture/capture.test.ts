// database-independent: the adapter alone, on a temp directory
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import capture from '../../../vendors/capture/index.js';
import type { EmailSendInput } from '../../../core/capabilities/email.js';
import { vendorContext } from '../../helpers/vendor-context.js';

const message = (subject: string): EmailSendInput => ({
  message_id: '<em_1@example.com>',
  idempotency_key: 'em_1',
  from: { address: 'noreply@example.com' },
  to: [{ address: 'ann@example.org' }],
  cc: [],
  bcc: [{ address: 'hidden@example.org' }],
  subject,
  text: 'hello',
  attachments: [],
  headers: {},
});

t.test('kept once per Message-ID, rendered as it would go out; nothing kept reads as null', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-capture-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const inst = await capture.create({ dir }, vendorContext('capture'));
  t.teardown(() => inst.close?.()); // its MIME worker threads
  const opts = { signal: new AbortController().signal, deadline: Date.now() + 10_000 };
  const send = inst.capabilities['email.send']!;
  t.equal(send.idempotencyKeys, true, 'a resend after a crash is safe here');
  const out = await send.invoke(message('first'), opts);
  t.same(out, {
    vendor_message_id: '<em_1@example.com>',
    accepted: ['ann@example.org', 'hidden@example.org'],
    rejected: [],
  });
  await send.invoke(message('second'), opts);
  t.equal(readdirSync(dir).length, 1, 'one file, no temp files left');
  const { raw } = await inst.capabilities['email.raw']!.invoke({ message_id: '<em_1@example.com>' }, opts);
  t.match(raw, /^Subject: first\r$/m, 'the first copy wins');
  t.match(raw, /^Message-ID: <em_1@example.com>\r$/m);
  t.notMatch(raw, /hidden@/, 'no Bcc header');
  t.same(await inst.capabilities['email.raw']!.invoke({ message_id: '<em_2@example.com>' }, opts), { raw: null });
});
