import PQueue from 'p-queue';
import type { Sharp, SharpOptions } from 'sharp';
import { VendorFailure } from '../../core/define.js';
import {
  IMAGE_MAX_INPUT_BYTES,
  IMAGE_MAX_INPUT_PIXELS,
  type ImageProcessOutput,
} from '../../core/capabilities/image.js';

type SharpFn = (input?: Buffer, options?: SharpOptions) => Sharp;
type RemoveFn = (image: Blob, config: { model: string; output: { format: 'image/png' } }) => Promise<Blob>;

const DECODE: SharpOptions = { limitInputPixels: IMAGE_MAX_INPUT_PIXELS, failOn: 'error', pages: 1 };
const DECODED = new Set(['jpeg', 'png', 'webp', 'gif', 'heif', 'tiff']);

function refused(message: string, status: 413 | 422 = 422): VendorFailure {
  return new VendorFailure('client_error', message, { status });
}

/**
 * @imgly/background-removal-node, loaded on the first call (its import pulls in onnxruntime, and
 * most gateways never remove a background). The library memoizes its ONNX session by config, so
 * one config object for the process means the model is read once. Inference runs on
 * onnxruntime's own threads, off the event loop; the queue lets one image at a time in, since
 * two at once double the model's working memory on a small machine.
 */
export class BackgroundRemover {
  private libs?: Promise<{ remove: RemoveFn; sharp: SharpFn }>;
  private readonly queue = new PQueue({ concurrency: 1 });
  private readonly config: { model: string; output: { format: 'image/png' } };

  constructor(
    model: string,
    private readonly timeoutMs: number
  ) {
    this.config = { model, output: { format: 'image/png' } };
  }

  load(): Promise<{ remove: RemoveFn; sharp: SharpFn }> {
    this.libs ??= Promise.all([import('@imgly/background-removal-node'), import('sharp')]).then(([imgly, s]) => ({
      remove: imgly.removeBackground as unknown as RemoveFn,
      sharp: s.default as unknown as SharpFn,
    }));
    return this.libs;
  }

  /** The subject of `data` on a transparent background, as PNG; a caller gone while it waits never starts it. */
  async run(data: Buffer, signal: AbortSignal): Promise<ImageProcessOutput> {
    const { remove, sharp } = await this.load();
    // Decoded and re-encoded as PNG here, so the input caps hold and the library sees one format.
    const png = await normalized(sharp, data);
    return this.queue.add(() => this.removeWithin(remove, sharp, png), { signal }) as Promise<ImageProcessOutput>;
  }

  private async removeWithin(remove: RemoveFn, sharp: SharpFn, png: Buffer): Promise<ImageProcessOutput> {
    let timer: NodeJS.Timeout | undefined;
    // Inference cannot be interrupted: past the timeout the caller gets its answer, and the queue
    // slot stays held until the work ends, so the memory bound still holds.
    const work = remove(new Blob([new Uint8Array(png)], { type: 'image/png' }), this.config).then(async (blob) => {
      const out = Buffer.from(await blob.arrayBuffer());
      const meta = await sharp(out).metadata();
      return { data: out, format: 'png', mime: 'image/png', width: meta.width!, height: meta.height! } as const;
    });
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new VendorFailure('timeout', `Background removal took over ${this.timeoutMs} ms.`)),
        this.timeoutMs
      );
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.queue.clear();
    await this.queue.onIdle();
  }
}

async function normalized(sharp: SharpFn, data: Buffer): Promise<Buffer> {
  if (data.length > IMAGE_MAX_INPUT_BYTES) {
    throw refused(`The input is ${data.length} bytes, over the cap of ${IMAGE_MAX_INPUT_BYTES} bytes.`, 413);
  }
  try {
    const meta = await sharp(data, DECODE).metadata();
    if (!meta.format || !DECODED.has(meta.format)) {
      throw refused(
        `The input is ${meta.format ?? 'an unknown'} data; JPEG, PNG, WebP, GIF, AVIF, HEIF or TIFF is decoded.`
      );
    }
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
