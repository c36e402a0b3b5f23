import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, link, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  mailOptions,
  PRIVATE_DIR,
  PRIVATE_FILE,
  type EmailMimeBuilder,
  type EmailSendInput,
} from '../../core/kit/vendor.js';

/** Captured messages, one `.eml` file each, named by a hash of the Message-ID (any bytes a name may not hold). */
export class CaptureStore {
  private ready?: Promise<unknown>;

  constructor(
    private readonly dir: string,
    private readonly builder: EmailMimeBuilder
  ) {}

  private file(messageId: string): string {
    return join(this.dir, `${createHash('sha256').update(messageId).digest('hex')}.eml`);
  }

  /**
   * Render the message as an SMTP server would receive it (built and signed off the event loop,
   * Bcc left out of the headers) and keep it; a Message-ID already kept is left as it is (a retry
   * sends nothing twice).
   */
  async keep(input: EmailSendInput, opts: { signal: AbortSignal; accountId?: string }): Promise<void> {
    this.ready ??= mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR });
    await this.ready;
    const target = this.file(input.message_id);
    const { raw: message } = await this.builder.build(mailOptions(input), opts);
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
