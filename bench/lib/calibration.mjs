// A machine calibration the benches print on their first lines: the CPU time raw sharp takes
// for the image bench's anchor (a 1600×1200 noise JPEG resized to 400 px, JPEG q80), timed in
// the bench process before any server starts. It moves with the machine (CPU model, a
// neighbour's cache pressure) and much less with the load than wall times do, so it tells two
// runs' machines apart; BENCHMARKS.md's machine table lists it for each session.
import sharp from 'sharp';
import { noiseJpeg } from '../image/load.mjs';
import { fmt, load, selfCpu } from './measure.mjs';

const DECODE = { limitInputPixels: 40_000_000, failOn: 'error', pages: 1 };

/** `calibration: raw sharp 1600→400 JPEG … ms CPU an image (n images), load …`. */
export async function calibrationLine(n = 20) {
  const input = await noiseJpeg(1600, 1200);
  const once = () =>
    sharp(input, DECODE).autoOrient().resize({ width: 400, fit: 'cover' }).jpeg({ quality: 80 }).toBuffer();
  for (let i = 0; i < 3; i++) await once();
  const c0 = selfCpu();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await once();
  const cpuMs = ((selfCpu() - c0) * 1000) / n;
  const wallMs = (performance.now() - t0) / n;
  return (
    `calibration: raw sharp 1600→400 JPEG q80 ${fmt(cpuMs, 1)} ms CPU an image (${fmt(wallMs, 1)} ms wall, `
    + `${n} in a row, the image bench's anchor), load ${load()}`
  );
}
