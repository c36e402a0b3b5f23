import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, link, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { mailOptions, PRIVATE_DIR, PRIVATE_FILE, type EmailSendInput } from '../../core/kit/vendor.js';

interface Composer {
  MailComposer: new (mail: object) => { compile(): { createReadStream(): Readable } };
  DKIM: new (opts: object) => { sign(input: Readable): Readable };
}
let lib: Promise<Composer> | undefined;
/** nodemailer's composer and signer, loaded on the first message, not at boot. */
function composer(): Promise<Composer> {
  lib ??= Promise.all([import('nodemailer/lib/mail-composer'), import('nodemailer/lib/dkim')]).then(([c, d]) => ({
    MailComposer: ((c as any).default ?? c) as Composer['MailComposer'],
    DKIM: ((d as any).default ?? d) as Composer['DKIM'],
  }));
  return lib;
}

/**
 * The message as an SMTP server would receive it: nodemailer's composer (the SMTP transport's
 * own), Bcc left out of the headers, DKIM-signed when a key comes with it.
 */
export async function render(input: EmailSendInput): Promise<Buffer> {
  const { MailComposer, DKIM } = await composer();
  const opts = mailOptions(input);
  const stream = new MailComposer(opts).compile().createReadStream();
  const out = opts.dkim ? new DKIM(opts.dkim).sign(stream) : stream;
  const chunks: Buffer[] = [];
  for await (const c of out) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Captured messages, one `.eml` file each, named by a hash of the Message-ID (any bytes a name may not hold). */
export class CaptureStore {
  private ready?: Promise<unknown>;

  constructor(private readonly dir: string) {}

  private file(messageId: string): string {
    return join(this.dir, `${createHash('sha256').update(messageId).digest('hex')}.eml`);
  }

  /** Render and keep the message; a Message-ID already kept is left as it is (a retry sends nothing twice). */
  async keep(input: EmailSendInput): Promise<void> {
    this.ready ??= mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR });
    await this.ready;
    const target = this.file(input.message_id);
    const message = await render(input);
    // Written whole beside it, then linked into place: a crash leaves no half message, and link
    // refuses an existing name, so the first copy of a message wins.
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, message, { mode: PRIVATE_FILE });
    try {
      await link(temp, target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await unlink(temp).catch(() => {});
    }
  }

  async read(messageId: string): Promise<string | null> {
    try {
      return await readFile(this.file(messageId), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }
}
