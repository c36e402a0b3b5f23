import { availableParallelism } from 'node:os';
import type { Sharp, SharpOptions } from 'sharp';
import {
  VendorFailure,
  FairQueue,
  IMAGE_MAX_INPUT_BYTES,
  IMAGE_MAX_INPUT_PIXELS,
  lockLoaders,
  notAnImage,
  sniffImage,
} from '../../core/kit/vendor.js';
import { type Header, quickHeader } from './header.js';

type SharpFn = (input?: Buffer | SharpOptions, options?: SharpOptions) => Sharp;

/** The input as decoded: the caps enforced, the first frame only (an animation's later frames are dropped). */
export const DECODE: SharpOptions = { limitInputPixels: IMAGE_MAX_INPUT_PIXELS, failOn: 'error', pages: 1 };

/** The caller's image is wrong (413 over a cap, else 422): no other engine would do better. */
export function refused(message: string, status: 413 | 422 = 422): VendorFailure {
  return new VendorFailure('client_error', message, { status });
}

/**
 * Inputs up to this size are small work (a thumbnail, an avatar): they have a lane of their own,
 * so a burst of 40-MP resizes cannot make them wait seconds for a slot. A small file that
 * declares many pixels is still refused or bounded by the same caps in its lane.
 */
export const SMALL_INPUT_BYTES = 512 * 1024;

/**
 * Inputs whose header declares more pixels than this (a 40-MP scan, a panorama; a 12-MP phone
 * photo is below) are huge work: seconds of a core each. Their lane has a core fewer than the
 * machine, so a burst of them leaves one core to the event loop and the small lane (bench/image's
 * small-request p99 beside 40-MP resizes).
 */
export const HUGE_INPUT_PIXELS = 16_000_000;

/** Which queue an image waits in: see SMALL_INPUT_BYTES and HUGE_INPUT_PIXELS. */
export type Lane = 'small' | 'large' | 'huge';

/** Whose call it is (the router's InvokeOptions): the lanes are shared fairly between accounts. */
export interface EngineCall {
  signal: AbortSignal;
  accountId?: string;
  /** When the call's answer is due (ms since epoch): libvips stops a pipeline still running then. */
  deadline?: number;
}

/**
 * sharp, loaded on the first image call (not at boot: most gateways never process one), and
 * queues that bound how many images are worked on at once: one slot for small inputs and header
 * reads, `concurrency` for large ones, a core fewer for huge ones. libvips does the pixel work on
 * libuv's thread pool, off the event loop; the queues keep a burst of 40-MP resizes from
 * holding every thread, core and all the memory at once, so other requests are still answered.
 * Each lane is fair between accounts (core/isolation/fair-queue.ts): a free slot goes to the
 * accounts in turn, so another account's call waits for the first slot to free, not behind
 * one account's whole burst; and an account with `maxWaiting` calls already waiting in a lane
 * is refused (429) rather than queued, so a burst cannot hold the gateway's memory either. No
 * slot is kept idle for other accounts: a gateway with one account keeps all of them.
 */
export class SharpEngine {
  private lib?: Promise<SharpFn>;
  private readonly lanes: Record<Lane, FairQueue>;
  /** Headers read to pick a lane, so the work does not read them again. */
  private readonly headers = new WeakMap<Buffer, Header>();

  constructor(concurrency: number, maxWaiting = Number.POSITIVE_INFINITY) {
    const cores = Math.max(1, availableParallelism());
    // One more than the cores: a pipeline waits on its own thread hand-offs now and then, and
    // one more image fills those gaps (bench/image: ~5 % more images a second on 2 cores). But
    // a thread of libuv's pool is left to file writes and syncs (the result store's).
    const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    const large = concurrency || Math.max(1, Math.min(cores + 1, pool - 1));
    const lane = (slots: number) => new FairQueue({ concurrency: slots, maxQueuedPerAccount: maxWaiting });
    this.lanes = { small: lane(1), large: lane(large), huge: lane(Math.max(1, Math.min(large, cores - 1))) };
  }

  /** The lane of an input: small by its bytes, else huge or large by the pixels its header declares. */
  async laneOf(data: Buffer): Promise<Lane> {
    if (data.length <= SMALL_INPUT_BYTES) return 'small';
    // Refused by the probe at once, before any decoder: too many bytes, or not an image's signature.
    if (data.length > IMAGE_MAX_INPUT_BYTES || !sniffImage(data)) return 'small';
    const sharp = await this.sharp();
    // Not an image, or a broken header: the work's probe says so, with the right error.
    const meta = await this.header(sharp, data).catch(() => undefined);
    if (!meta) return 'large';
    this.headers.set(data, meta);
    const pixels = (meta.width ?? 0) * (meta.height ?? 0);
    // Over the cap: the probe refuses it at once, so it need not wait behind huge work.
    if (pixels > IMAGE_MAX_INPUT_PIXELS) return 'small';
    return pixels > HUGE_INPUT_PIXELS ? 'huge' : 'large';
  }

  /** The input's header: read in JavaScript for a plain JPEG or PNG, else by sharp (header.ts). */
  private async header(sharp: SharpFn, data: Buffer): Promise<Header> {
    return (await quickHeader(data)) ?? sharp(data, DECODE).metadata();
  }

  sharp(): Promise<SharpFn> {
    this.lib ??= import('sharp').then((m) => {
      lockLoaders(m.default);
      return m.default as unknown as SharpFn;
    });
    return this.lib;
  }

  /**
   * Run `work` when a slot of its lane is free for the caller's account; a caller gone
   * while it waits never starts it.
   */
  async run<T>(call: EngineCall, lane: Lane, work: (sharp: SharpFn) => Promise<T>): Promise<T> {
    const sharp = await this.sharp();
    return this.lanes[lane].add(
      call.accountId ?? '',
      async () => {
        try {
          return await work(call.deadline ? bounded(sharp, call.deadline) : sharp);
        } catch (e) {
          throw mapped(e);
        }
      },
      { signal: call.signal }
    );
  }

  /** The input's header: refused before any pixel is decoded when it is too big or not an image. */
  async probe(sharp: SharpFn, data: Buffer, what = 'input') {
    if (data.length > IMAGE_MAX_INPUT_BYTES) {
      throw refused(`The ${what} is ${data.length} bytes, over the cap of ${IMAGE_MAX_INPUT_BYTES} bytes.`, 413);
    }
    const kind = sniffImage(data);
    if (!kind) throw refused(notAnImage(what));
    const meta = this.headers.get(data) ?? (await this.header(sharp, data));
    // The decoder's reading differs from the signature: a file made to look like one type.
    if (meta.format !== kind) throw refused(notAnImage(what));
    if ((meta.width ?? 0) * (meta.height ?? 0) > IMAGE_MAX_INPUT_PIXELS) throw overCap();
    const swapped = (meta.orientation ?? 1) >= 5;
    const width = swapped ? meta.height! : meta.width!;
    const height = swapped ? meta.width! : meta.height!;
    return { meta, width, height };
  }

  async close(): Promise<void> {
    const lanes = Object.values(this.lanes);
    for (const q of lanes) q.clear();
    await Promise.all(lanes.map((q) => q.onIdle()));
  }
}

/**
 * sharp whose every pipeline libvips ends once the call's deadline has passed (sharp's
 * `timeout`, whole seconds, counted from when the pipeline starts): a 40-MP decode left running
 * past its 504 would hold a lane slot, a thread and its memory for nobody.
 */
function bounded(sharp: SharpFn, deadline: number): SharpFn {
  return ((input?: Buffer | SharpOptions, options?: SharpOptions) =>
    sharp(input, options).timeout({
      seconds: Math.max(1, Math.ceil((deadline - Date.now()) / 1000)),
    })) as SharpFn;
}

function overCap(): VendorFailure {
  return refused(`The image is over the cap of ${IMAGE_MAX_INPUT_PIXELS / 1e6} megapixels.`, 413);
}

/** sharp's errors are about the input (or the operations asked of it); the caps are 413. */
function mapped(e: unknown): unknown {
  if (e instanceof VendorFailure || (e as Error)?.name === 'AbortError') return e;
  const message = String((e as Error)?.message ?? e).split('\n')[0];
  if (/exceeds pixel limit/i.test(message)) return overCap();
  if (/timeout: \d+% complete/i.test(message)) {
    return new VendorFailure('timeout', 'The image took longer than the call allows; its processing was stopped.');
  }
  // The gateway's own bug (a TypeError…) stays one: the router answers 500 and cools nothing down.
  if (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError) return e;
  return refused(`The image cannot be processed: ${message}`);
}
