import { Type } from '@sinclair/typebox';
import { defineVendor } from '../../core/define.js';
import {
  planPrice,
  type IMAGE_CAPABILITIES,
  type ImageMetadataInput,
  type ImageProcessInput,
} from '../../core/capabilities/image.js';
import type { ImplOf } from '../../core/capabilities/capability.js';
import { SharpEngine } from './engine.js';
import { processImage } from './pipeline.js';
import { readMetadata } from './metadata.js';

type Caps = typeof IMAGE_CAPABILITIES;

/**
 * The embedded image engine: sharp (libvips) in the gateway's own process, so a fresh
 * gateway processes images with no vendor key. Priced by the image area (its plan): the
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
    },
    { additionalProperties: false, default: {} }
  ),
  create(config) {
    const engine = new SharpEngine(config.concurrency);
    const process: ImplOf<Caps['image.process']> = {
      invoke: async (input: ImageProcessInput, { signal }) =>
        engine.run(signal, await engine.laneOf(input.data), (sharp) => processImage(engine, sharp, input)),
      price: (_input, _output, plan) => planPrice(plan),
    };
    const metadata: ImplOf<Caps['image.metadata']> = {
      invoke: (input: ImageMetadataInput, { signal }) =>
        engine.run(signal, 'small', (sharp) => readMetadata(engine, sharp, input)),
      price: (_input, _output, plan) => planPrice(plan),
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
      close: () => engine.close(),
    };
  },
});
