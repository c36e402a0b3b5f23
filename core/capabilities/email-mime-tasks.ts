// What the email vendors' MIME worker threads run (core/isolation/worker-pool.ts): composing the
// RFC 5322 message (base64 of every attachment, quoted-printable of the parts) and signing it with
// DKIM (RSA, a hash of the whole body). A 10 MiB attachment held the event loop for a good part
// of a second, and nothing could stop it. Loaded by path in the thread; it imports nodemailer
// alone (the message options come from `mailOptions`, made on the event loop, where it is cheap).

import { createPrivateKey, type KeyObject } from 'node:crypto';

interface Composer {
  MailComposer: new (mail: object) => { compile(): MimeNode };
  DKIM: new (opts: object) => { sign(input: Buffer): NodeJS.ReadableStream };
}
interface MimeNode {
  build(): Promise<Buffer>;
  getEnvelope(): { from: string | false; to: string[] };
}

let lib: Promise<Composer> | undefined;
function composer(): Promise<Composer> {
  lib ??= Promise.all([import('nodemailer/lib/mail-composer'), import('nodemailer/lib/dkim')]).then(([c, d]) => ({
    MailComposer: ((c as any).default ?? c) as Composer['MailComposer'],
    DKIM: ((d as any).default ?? d) as Composer['DKIM'],
  }));
  return lib;
}

// Parsed keys by their PEM: OpenSSL decoding a PEM took two thirds of a signature's CPU (0.65 of
// 1 ms for RSA-2048), and a thread signs one domain's messages again and again.
const keys = new Map<string, KeyObject>();
const KEYS_KEPT = 64;

/** The key as a KeyObject, parsed once; a PEM it cannot read is left to nodemailer (which then does not sign). */
function parsedKey(pem: unknown): unknown {
  if (typeof pem !== 'string') return pem;
  let key = keys.get(pem);
  if (!key) {
    try {
      key = createPrivateKey(pem);
    } catch {
      return pem;
    }
    if (keys.size >= KEYS_KEPT) keys.delete(keys.keys().next().value!);
    keys.set(pem, key);
  }
  return key;
}

/** A message ready to go out: its bytes as an SMTP server takes them, and the SMTP envelope. */
export interface BuiltMessage {
  raw: Buffer;
  /** MAIL FROM and every RCPT TO (Bcc recipients too: they are in no header). */
  envelope: { from: string; to: string[] };
}

export const tasks = {
  /** nodemailer's composer (the SMTP transport's own), Bcc kept out of the headers, DKIM-signed when a key comes. */
  async build(mail: { dkim?: { privateKey?: unknown } } & Record<string, unknown>): Promise<BuiltMessage> {
    const { MailComposer, DKIM } = await composer();
    const node = new MailComposer(mail).compile();
    const unsigned = await node.build();
    const env = node.getEnvelope();
    const envelope = { from: env.from || '', to: env.to };
    if (!mail.dkim) return { raw: unsigned, envelope };
    const chunks: Buffer[] = [];
    const dkim = { ...mail.dkim, privateKey: parsedKey(mail.dkim.privateKey) };
    for await (const c of new DKIM(dkim).sign(unsigned)) chunks.push(c as Buffer);
    return { raw: Buffer.concat(chunks), envelope };
  },
};
