import type { Sharp, SharpOptions } from 'sharp';
import {
  VendorFailure,
  FairQueue,
  IMAGE_MAX_INPUT_BYTES,
  IMAGE_MAX_INPUT_PIXELS,
  type ImageProcessOutput,
  lockLoaders,
  notAnImage,
  sniffImage,
} from '../../core/kit/vendor.js';
import { RemovalProcess } from './removal-process.js';

type SharpFn = (input?: Buffer, options?: SharpOptions) => Sharp;

const DECODE: SharpOptions = { limitInputPixels: IMAGE_MAX_INPUT_PIXELS, failOn: 'error', pages: 1 };

function refused(message: string, status: 413 | 422 = 422): VendorFailure {
  return new VendorFailure('client_error', message, { status });
}

/**
 * Background removal: the input checked and decoded here (sharp, on libuv's threads), the
 * model run in a child process (removal-process.ts) that a deadline can kill. The queue lets
 * one image at a time into the child, since two at once double the model's working memory on a
 * small machine; it is fair between accounts (their calls take turns) and refuses an account
 * with `maxWaiting` removals already waiting (429), so one account cannot hold the engine.
 */
export class BackgroundRemover {
  private lib?: Promise<SharpFn>;
  readonly queue: FairQueue;
  readonly process: RemovalProcess;

  constructor(
    location: { libraryUrl: string; publicPath: string },
    model: string,
    private readonly timeoutMs: number,
    maxWaiting = Number.POSITIVE_INFINITY
  ) {
    this.process = new RemovalProcess(location.libraryUrl, location.publicPath, model);
    this.queue = new FairQueue({ concurrency: 1, maxQueuedPerAccount: maxWaiting });
  }

  /** sharp, loaded on the first call (most gateways never remove a background). */
  sharp(): Promise<SharpFn> {
    this.lib ??= import('sharp').then((s) => {
      lockLoaders(s.default);
      return s.default as unknown as SharpFn;
    });
    return this.lib;
  }

  /**
   * The subject of `data` on a transparent background, as PNG; a caller gone while it waits
   * never starts it, and one gone while it runs ends it.
   */
  async run(
    data: Buffer,
    call: { signal: AbortSignal; deadline: number; accountId?: string }
  ): Promise<ImageProcessOutput> {
    // Decoded and re-encoded as PNG here, so the input caps hold and the library sees one format.
    const png = await normalized(await this.sharp(), data);
    const out = await this.queue.add(
      call.accountId ?? '',
      (signal) => this.process.run(png, signal, Math.max(1, Math.min(this.timeoutMs, call.deadline - Date.now()))),
      { signal: call.signal }
    );
    const { width, height } = pngSize(out);
    return { data: out, format: 'png', mime: 'image/png', width, height };
  }

  async close(): Promise<void> {
    this.queue.clear();
    await this.process.close();
    await this.queue.onIdle();
  }
}

/** A PNG's size from its IHDR chunk (the library writes PNG; anything else is its failure). */
function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || png.toString('latin1', 12, 16) !== 'IHDR') {
    throw new VendorFailure('unavailable', 'Background removal returned something that is not a PNG.');
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

async function normalized(sharp: SharpFn, data: Buffer): Promise<Buffer> {
  if (data.length > IMAGE_MAX_INPUT_BYTES) {
    throw refused(`The input is ${data.length} bytes, over the cap of ${IMAGE_MAX_INPUT_BYTES} bytes.`, 413);
  }
  const kind = sniffImage(data);
  if (!kind) throw refused(notAnImage());
  try {
    const meta = await sharp(data, DECODE).metadata();
    if (meta.format !== kind) throw refused(notAnImage());
    return await sharp(data, DECODE).rotate().png().toBuffer();
  } catch (e) {
    if (e instanceof VendorFailure) throw e;
    const message = String((e as Error)?.message ?? e).split('\n')[0];
    if (/exceeds pixel limit/i.test(message)) {
      throw refused(`The image is over the cap of ${IMAGE_MAX_INPUT_PIXELS / 1e6} megapixels.`, 413);
    }
    throw refused(`The image cannot be processed: ${message}`);
  }
}
