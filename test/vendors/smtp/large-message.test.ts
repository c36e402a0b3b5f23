// database-independent: the adapter alone, against a real SMTP server
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import t from 'tap';
import { runningTasks } from '../../../core/isolation/worker-pool.js';
import { smtpSink } from '../../fakes/smtp-sink.js';
import { adapter, message, opts } from './smtp-adapter.js';

// A message of 10 MiB of attachments is composed (base64, 14 MiB of it) and DKIM-signed in a
// worker thread: while it is built, the event loop keeps turning and no turn waits long.
t.test('a 10 MiB message is built and signed off the event loop, then sent whole', async (t) => {
  const sink = await smtpSink(t);
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const send = (await adapter(t, { url: sink.url })).capabilities['email.send']!;
  // Random bytes: nothing in the encoding or the body hash can take a short cut.
  const attachments = [0, 1].map((i) => ({
    filename: `part${i}.bin`,
    content: randomBytes(5 * 1024 * 1024).toString('base64'),
    content_type: 'application/octet-stream',
  }));
  const dkim = { domain: 'mail.example', selector: 'sel1', private_key: privateKey };

  // A timer that runs every millisecond it can, counting its turns while the build runs in a thread.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  let turns = 0;
  let begun = 0;
  let buildMs = 0;
  let done = false;
  const tick = () => {
    const building = runningTasks('mail MIME') > 0;
    if (building && !begun) {
      begun = performance.now();
      delay.enable();
    } else if (!building && begun && !buildMs) {
      buildMs = performance.now() - begun;
      delay.disable();
    }
    if (building) turns++;
    if (!done) setTimeout(tick, 1);
  };
  tick();
  const out = await send.invoke(message({ attachments, dkim }), opts());
  done = true;
  t.same(out.accepted, ['ann@example.org', 'carl@example.org', 'dora@example.org']);

  t.ok(buildMs > 0, 'the build ran in a worker thread, seen from a timer on the event loop');
  t.ok(turns >= 3, `the timer ran ${turns} times while the message was built (${Math.round(buildMs)} ms)`);
  // Generous: the longest any turn waited is well under the build's own time (on the loop it was all of it).
  const longest = delay.max / 1e6;
  t.ok(longest < buildMs / 2, `the longest wait of a turn during the build was ${longest.toFixed(1)} ms`);

  t.equal(sink.messages.length, 1);
  const raw = sink.messages[0].raw;
  t.ok(raw.length > 13 * 1024 * 1024, `the whole message arrived (${raw.length} bytes)`);
  t.match(raw, /^DKIM-Signature: /m);
  t.match(raw, /^Message-ID: <em_1@mail\.example>\r$/m);
  t.notMatch(raw, /^Bcc:/im);
});
