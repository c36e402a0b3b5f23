import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cache = new Map<string, Buffer>();

/** A real H.264 MP4 of the size and length given (ffmpeg's test pattern), as a vendor would hand one back. */
export function testMp4(width: number, height: number, seconds: number): Buffer {
  const key = `${width}x${height}x${seconds}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const dir = mkdtempSync(join(tmpdir(), 'video-fixture-'));
  try {
    const file = join(dir, 'v.mp4');
    const src = `testsrc=size=${width}x${height}:rate=24:duration=${seconds}`;
    const codec = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
    execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', src, ...codec, file]);
    const bytes = readFileSync(file);
    cache.set(key, bytes);
    return bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A tiny JPEG (the SOI and EOI markers around nothing a decoder needs here): a thumbnail's bytes. */
export const THUMB_JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9,
]);
