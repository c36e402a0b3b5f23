import t from 'tap';
import pino from 'pino';
import exifr from 'exifr';
import sharpLib from 'sharp';
import sharpVendor from '../../../vendors/sharp/index.js';
import type { ImageOp, ImageProcessOutput } from '../../../core/capabilities/image.js';
import { jpegWithGps, pixel, pngBomb, solidPng } from '../../fakes/test-images.js';

const ctx = {
  instanceId: 'sharp',
  fetch,
  publicUrl: 'http://127.0.0.1',
  dataDir: '/tmp',
  log: pino({ level: 'silent' }),
};

async function engine(t: Tap) {
  const inst = await sharpVendor.create({ concurrency: 2 }, ctx);
  t.teardown(() => inst.close?.());
  const opts = { signal: new AbortController().signal, deadline: Date.now() + 60_000 };
  return {
    process: (data: Buffer, operations: ImageOp[]) =>
      inst.capabilities['image.process'].invoke({ data, operations }, opts) as Promise<ImageProcessOutput>,
    metadata: (data: Buffer) => inst.capabilities['image.metadata'].invoke({ data }, opts),
    // The image area prices every call: the engine has no price() of its own.
    price: (inst.capabilities['image.process'] as { price?: unknown }).price,
  };
}
type Tap = typeof t;

t.test('resize then convert: the dimensions and format read back; EXIF and GPS gone', async (t) => {
  const e = await engine(t);
  const input = await jpegWithGps(400, 200);
  t.ok((await exifr.gps(input))?.latitude, 'the input has GPS');
  const out = await e.process(input, [
    { op: 'resize', width: 100 },
    { op: 'convert', format: 'webp', quality: 60 },
  ]);
  t.match(out, { format: 'webp', mime: 'image/webp', width: 100, height: 50 });
  const meta = await sharpLib(out.data).metadata();
  t.match(meta, { format: 'webp', width: 100, height: 50 });
  t.equal(meta.exif, undefined, 'no EXIF block in the output');
  t.equal(await exifr.gps(out.data).catch(() => undefined), undefined, 'no GPS');
  const png = await e.process(input, [
    { op: 'resize', width: 60, height: 60, fit: 'contain' },
    { op: 'convert', format: 'png' },
  ]);
  t.match(png, { format: 'png', width: 60, height: 60 });
  const avif = await e.process(input, [{ op: 'convert', format: 'avif', quality: 0 }]);
  t.equal((await sharpLib(avif.data).metadata()).compression, 'av1');
  const again = await e.process(avif.data, [{ op: 'resize', width: 50 }]);
  t.match(again, { format: 'avif', mime: 'image/avif', width: 50 }, 'AVIF in, AVIF out');
  const gif = await sharpLib({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
    .gif()
    .toBuffer();
  t.match(await e.process(gif, []), { format: 'png' }, 'GIF in, PNG out');
});

t.test('operations run in the order given: rotate then resize is not resize then rotate', async (t) => {
  const e = await engine(t);
  const input = await solidPng(400, 200);
  const a = await e.process(input, [
    { op: 'rotate', angle: 90 },
    { op: 'resize', width: 100 },
  ]);
  t.match(a, { width: 100, height: 200 });
  const b = await e.process(input, [
    { op: 'resize', width: 100 },
    { op: 'rotate', angle: 90 },
  ]);
  t.match(b, { width: 50, height: 100 });
});

t.test('rotate without an angle orients by EXIF; the output has no orientation tag left', async (t) => {
  const e = await engine(t);
  const input = await jpegWithGps(200, 100, 6);
  t.equal((await sharpLib(input).metadata()).orientation, 6);
  const out = await e.process(input, [{ op: 'rotate' }]);
  t.match(out, { width: 100, height: 200, format: 'jpeg' });
  t.not((await sharpLib(out.data).metadata()).orientation, 6);
  t.match(await e.metadata(input), { width: 100, height: 200, mime: 'image/jpeg' }, 'metadata reports the shown size');
});

t.test('watermarks change the pixels where they are placed and nowhere else', async (t) => {
  const e = await engine(t);
  const input = await solidPng(300, 200, '#808080');
  const text = await e.process(input, [
    { op: 'watermark', text: 'SAMPLE', position: 'top_left', opacity: 1, size: 0.5 },
  ]);
  const changed = async (img: Buffer, x0: number, y0: number, x1: number, y1: number) => {
    let n = 0;
    for (let y = y0; y < y1; y += 3)
      for (let x = x0; x < x1; x += 3) if ((await pixel(img, x, y)).join() !== '128,128,128') n++;
    return n;
  };
  t.ok((await changed(text.data, 0, 0, 150, 40)) > 10, 'the text is in the top left');
  t.equal(await changed(text.data, 160, 100, 300, 200), 0, 'the bottom right is untouched');
  const mark = await sharpLib({ create: { width: 50, height: 50, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
  const img = await e.process(input, [
    { op: 'watermark', image: mark, position: 'bottom_right', opacity: 1, size: 0.2 },
  ]);
  t.same(await pixel(img.data, 290, 190), [255, 0, 0], 'an opaque red mark at the bottom right');
  t.same(await pixel(img.data, 10, 10), [128, 128, 128]);
  const faint = await e.process(input, [
    { op: 'watermark', image: mark, position: 'bottom_right', opacity: 0.5, size: 0.2 },
  ]);
  const [r, g] = await pixel(faint.data, 290, 190);
  t.ok(r > 150 && r < 230 && g < 100, `half opacity blends (${r},${g})`);
});

t.test("bad input is the caller's: 422 undecodable or truncated, 413 for a pixel bomb or a huge output", async (t) => {
  const e = await engine(t);
  await t.rejects(e.process(Buffer.from('not an image at all'), []), {
    name: 'VendorFailure',
    kind: 'client_error',
    status: 422,
  });
  const jpeg = await jpegWithGps(300, 300);
  await t.rejects(e.process(jpeg.subarray(0, jpeg.length >> 1), []), { kind: 'client_error', status: 422 });
  await t.rejects(e.process(pngBomb(), [{ op: 'resize', width: 10 }]), {
    kind: 'client_error',
    status: 413,
    message: /40 megapixels/,
  });
  await t.rejects(e.metadata(pngBomb()), { status: 413 });
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
  await t.rejects(
    e.process(svg, []),
    { status: 422, message: /SVG, PDF and other types are not decoded/ },
    'SVG is not decoded'
  );
  const small = await solidPng(10, 10);
  await t.rejects(e.process(small, [{ op: 'resize', width: 16000, height: 16000, fit: 'fill' }]), { status: 413 });
});

t.test('an animated GIF: the first frame', async (t) => {
  const e = await engine(t);
  const frames = await sharpLib({ create: { width: 20, height: 60, channels: 3, background: '#00ff00' } })
    .gif()
    .toBuffer();
  const anim = await sharpLib(frames, { animated: true }).gif({ loop: 0 }).toBuffer();
  const meta = await e.metadata(anim);
  t.match(meta, { mime: 'image/gif', width: 20, height: 60 });
  const out = await e.process(anim, [{ op: 'convert', format: 'png' }]);
  t.match(out, { width: 20, height: 60, format: 'png' });
});

t.test("metadata: EXIF flat, GPS included (the caller's own image); no price() of the engine's", async (t) => {
  const e = await engine(t);
  const meta = await e.metadata(await jpegWithGps(64, 32));
  t.match(meta, {
    width: 64,
    height: 32,
    mime: 'image/jpeg',
    exif: { Make: 'TestCam', Model: 'T-1', GPSLatitudeRef: 'N' },
  });
  t.ok(Math.abs((meta.exif!.latitude as number) - 51.4667) < 0.01);
  t.notOk(await e.metadata(await solidPng(4, 4)).then((m) => m.exif), 'no exif field when there is none');
  t.equal(e.price, undefined);
});
