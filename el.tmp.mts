import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import sharpLib from 'sharp';
import sharpVendor from './vendors/sharp/index.ts';
const inst = await sharpVendor.create({ concurrency: 2 } as any, { instanceId: 'sharp', fetch, publicUrl: 'http://127.0.0.1', dataDir: '/tmp', log: pino({ level: 'silent' }) });
const opts = { signal: new AbortController().signal, deadline: Date.now() + 120_000 };
const proc = (data: Buffer, operations: any[]) => inst.capabilities['image.process'].invoke({ data, operations }, opts);
const noise = await sharpLib({ create: { width: 912, height: 684, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png().toBuffer();
const big = await sharpLib(noise).resize(7296, 5472).jpeg({ quality: 90 }).toBuffer();
await proc(await sharpLib(noise).resize(64).jpeg().toBuffer(), [{ op: 'resize', width: 32 }]);
for (let i = 0; i < 3; i++) {
  const delay = monitorEventLoopDelay({ resolution: 10 }); delay.enable();
  // raw sharp for comparison
  let s = performance.now();
  await sharpLib(big).autoOrient().resize({ width: 400 }).jpeg({ quality: 80 }).toBuffer();
  delay.disable(); console.log('raw', Math.round(performance.now() - s), 'max', Math.round(delay.max / 1e6));
  const d2 = monitorEventLoopDelay({ resolution: 10 }); d2.enable();
  s = performance.now();
  await proc(big, [{ op: 'resize', width: 400 }, { op: 'convert', format: 'jpeg', quality: 80 }]);
  d2.disable(); console.log('engine', Math.round(performance.now() - s), 'max', Math.round(d2.max / 1e6));
}
await inst.close?.();
