import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { iso, PRIVATE_DIR, PRIVATE_FILE, VendorFailure, type CapturedSms } from '../../core/kit/vendor.js';

// Gateway message ids only (`sms_…`): nothing that could leave the directory.
const KEY = /^[A-Za-z0-9_-]{1,100}$/;

/** One JSON file a message under the capture directory, named by the gateway's id of the message. */
export class SmsCaptureStore {
  private ready?: Promise<unknown>;

  constructor(private readonly dir: string) {}

  private path(key: string): string {
    if (!KEY.test(key)) throw new VendorFailure('client_error', `sms-capture: unusable message id "${key}"`);
    return join(this.dir, `${key}.json`);
  }

  /** Keeps the message once: a second write of the same id returns what the first kept. */
  async keep(msg: Omit<CapturedSms, 'captured_at'>): Promise<CapturedSms> {
    const file = this.path(msg.id);
    const kept = await this.read(msg.id);
    if (kept) return kept;
    this.ready ??= mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR });
    await this.ready;
    const record: CapturedSms = { ...msg, captured_at: iso() };
    // Written beside and renamed: a reader never sees half a file, a crash leaves no torn one.
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(record), { mode: PRIVATE_FILE });
    await rename(tmp, file);
    return record;
  }

  async read(key: string): Promise<CapturedSms | null> {
    try {
      return JSON.parse(await readFile(this.path(key), 'utf8')) as CapturedSms;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }
}
