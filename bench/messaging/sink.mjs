// The messaging bench's SMTP sink: smtp-server on 127.0.0.1, no TLS, no auth, taking every
// message and counting it by its Message-ID (a message received twice counts once, and as a
// duplicate). Both sides of the bench send to it, so whatever it costs, it costs both alike.
import { SMTPServer } from 'smtp-server';

const HEAD = 64 * 1024;

/** The Message-ID header of a message's head (unfolded, case-insensitive name). */
function messageId(head) {
  const m = /^message-id:[ \t]*(<[^>\r\n]+>)/im.exec(head);
  return m ? m[1] : undefined;
}

export async function smtpSink() {
  const seen = new Set();
  let count = 0;
  let duplicates = 0;
  let unnamed = 0;
  const firstRaw = new Map();
  const waiters = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    // Many connections at once from both sides' pools: no limit of the sink's own.
    maxClients: 1000,
    onData(stream, _session, cb) {
      const chunks = [];
      let size = 0;
      stream.on('data', (c) => {
        if (size < HEAD) chunks.push(c);
        size += c.length;
      });
      stream.on('end', () => {
        const head = Buffer.concat(chunks).toString('latin1');
        const id = messageId(head);
        if (!id) unnamed++;
        else if (seen.has(id)) duplicates++;
        else {
          seen.add(id);
          count++;
          const side = id.startsWith('<em_') ? 'gateway' : 'direct';
          if (!firstRaw.has(side)) firstRaw.set(side, head);
        }
        for (const w of waiters.splice(0)) w();
        cb(null, `Ok: queued as S${count}`);
      });
    },
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.server.address().port,
    get count() {
      return count;
    },
    get duplicates() {
      return duplicates;
    },
    get unnamed() {
      return unnamed;
    },
    /** The head of the first message each side sent (`gateway`, `direct`), to compare them. */
    head: (side) => firstRaw.get(side),
    /** Resolves at `performance.now()` when `n` distinct messages have arrived; rejects after `ms`. */
    reach(n, ms) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the sink had ${count} of ${n} messages after ${ms} ms`)), ms);
        const check = () => {
          if (count >= n) {
            clearTimeout(timer);
            resolve(performance.now());
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
