import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { Tap } from '../helpers/tap.js';

// A receiving SMTP server (smtp-server) on 127.0.0.1 that keeps every message it takes, with its
// envelope: what a real relay would queue. `reject` scripts a refusal at one step of the session.

export interface Received {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  url: string;
  port: number;
  messages: Received[];
  /** Answer the next RCPT TO or end of DATA with this SMTP code (then accept again). */
  reject: { rcpt?: number; data?: number };
  /** Connections the server saw, and from where (the egress proxy's side of the tunnel). */
  connections: string[];
}

const refusal = (code: number) => Object.assign(new Error(`scripted ${code}`), { responseCode: code });

export async function smtpSink(t: Tap, opts: { user?: string; pass?: string } = {}): Promise<SmtpSink> {
  const sink: Omit<SmtpSink, 'url' | 'port'> = { messages: [], reject: {}, connections: [] };
  const server = new SMTPServer({
    authOptional: !opts.user,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(session: SMTPServerSession, cb: (err?: Error) => void) {
      sink.connections.push(session.remoteAddress);
      cb();
    },
    onAuth(auth: any, _session: SMTPServerSession, cb: (err: Error | null, r?: { user: string }) => void) {
      if (auth.username === opts.user && auth.password === opts.pass) return cb(null, { user: auth.username });
      cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(_addr: unknown, _session: SMTPServerSession, cb: (err?: Error) => void) {
      const code = sink.reject.rcpt;
      sink.reject.rcpt = undefined;
      cb(code ? refusal(code) : undefined);
    },
    onData(stream: NodeJS.ReadableStream, session: SMTPServerSession, cb: (err?: Error | null, msg?: string) => void) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const code = sink.reject.data;
        sink.reject.data = undefined;
        if (code) return cb(refusal(code));
        const env = session.envelope;
        sink.messages.push({
          from: env.mailFrom ? env.mailFrom.address : '',
          to: env.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        cb(null, `Ok: queued as Q${sink.messages.length}`);
      });
    },
  } as any);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.server.address() as AddressInfo).port;
  const auth = opts.user ? `${opts.user}:${opts.pass}@` : '';
  return Object.assign(sink, { port, url: `smtp://${auth}localhost:${port}` });
}
