import type { ImageProcessInput, ImageProcessOutput } from '../../core/kit/vendor.js';
import { SharpEngine } from './engine.js';
import { processImage } from './pipeline.js';

// What the huge-image process (huge-process.ts) runs: the same pipeline as the gateway's own,
// on an engine of its own. Buffers arrive as Uint8Arrays (structured clone): made Buffers again.

const engine = new SharpEngine(1);
const never = new AbortController().signal;
const asBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** Process one image by `deadline` (ms since epoch); sharp's errors mapped as in the gateway. */
export function runHuge(input: ImageProcessInput, deadline: number): Promise<ImageProcessOutput> {
  const operations = input.operations.map((o) =>
    o.op === 'watermark' && o.image ? { ...o, image: asBuffer(o.image) } : o
  );
  const revived = { ...input, data: asBuffer(input.data), operations };
  return engine.run({ signal: never, deadline }, 'small', (sharp) => processImage(engine, sharp, revived));
}
