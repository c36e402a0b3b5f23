import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  type IMAGE_CAPABILITIES,
  type ImageMetadataInput,
  type ImageProcessInput,
  type ImplOf,
} from '../../core/kit/vendor.js';
import { SharpEngine } from './engine.js';
import { processImage } from './pipeline.js';
import { HugeProcesses } from './huge-process.js';
import { readMetadata } from './metadata.js';

type Caps = typeof IMAGE_CAPABILITIES;

/**
 * The embedded image engine: sharp (libvips) in the gateway's own process, huge inputs in niced
 * child processes (huge-process.ts), so a fresh gateway processes images with no vendor key. Priced by the image area (the router asks it): the
 * engine itself costs nothing per call.
 */
export default defineVendor({
  name: 'sharp',
  embedded: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      concurrency: Type.Integer({
        minimum: 0,
        default: 0,
        description:
          'Large images worked on at once; 0: the CPU cores and one more, at most UV_THREADPOOL_SIZE − 1. Huge ones (over 16 MP) get a core fewer, small ones a slot of their own.',
      }),
      max_waiting_per_account: Type.Integer({
        minimum: 1,
        default: 64,
        description:
          'Calls of one account waiting in one lane; one more is refused with 429 rate_limited at once (not queued).',
      }),
    },
    { additionalProperties: false, default: {} }
  ),
  create(config) {
    const engine = new SharpEngine(config.concurrency, config.max_waiting_per_account);
    const huge = new HugeProcesses();
    const process: ImplOf<Caps['image.process']> = {
      invoke: async (input: ImageProcessInput, call) => {
        const lane = await engine.laneOf(input.data);
        // Huge inputs in a niced child process (huge-process.ts), off the gateway's cores and memory.
        if (lane === 'huge') return engine.run(call, lane, () => huge.run(input, call.signal, call.deadline));
        return engine.run(call, lane, (sharp) => processImage(engine, sharp, input));
      },
    };
    const metadata: ImplOf<Caps['image.metadata']> = {
      invoke: (input: ImageMetadataInput, call) =>
        engine.run(call, 'small', (sharp) => readMetadata(engine, sharp, input)),
    };
    return {
      capabilities: { 'image.process': process, 'image.metadata': metadata },
      // Healthy when the native module loads on this machine (a missing libvips build is not).
      async health() {
        try {
          await engine.sharp();
          return { ok: true };
        } catch (e) {
          return { ok: false, error: (e as Error).message };
        }
      },
      close: async () => {
        await engine.close();
        await huge.close();
      },
    };
  },
});
