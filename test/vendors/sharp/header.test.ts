import t from 'tap';
import sharp from 'sharp';
import { pngBomb } from '../../fakes/test-images.js';
import { quickHeader } from '../../../vendors/sharp/header.js';

// The header read in JavaScript must say what sharp's metadata() says, or say nothing.

const base = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: '#369' } });

t.test('a JPEG: format, size and EXIF orientation as sharp reads them', async (t) => {
  for (const [name, img] of [
    ['baseline', await base(640, 480).jpeg().toBuffer()],
    ['progressive', await base(641, 479).jpeg({ progressive: true }).toBuffer()],
    ['orientation 6', await base(400, 300).jpeg().withMetadata({ orientation: 6 }).toBuffer()],
    ['orientation 3', await base(30, 20).jpeg().withMetadata({ orientation: 3 }).toBuffer()],
  ] as const) {
    const meta = await sharp(img).metadata();
    t.same(
      await quickHeader(img),
      {
        format: 'jpeg',
        width: meta.width,
        height: meta.height,
        ...(meta.orientation ? { orientation: meta.orientation } : {}),
      },
      name
    );
  }
});

t.test('a plain PNG is read; one with an eXIf chunk (an orientation) is left to sharp', async (t) => {
  const png = await base(33, 17).png().toBuffer();
  t.same(await quickHeader(png), { format: 'png', width: 33, height: 17 });
  const rotated = await base(33, 17).png().withMetadata({ orientation: 6 }).toBuffer();
  if ((await sharp(rotated).metadata()).orientation === 6) {
    t.ok(rotated.includes(Buffer.from('eXIf')), 'libvips wrote the orientation as an eXIf chunk');
    t.equal(await quickHeader(rotated), undefined, 'left to sharp');
  } else t.pass('this libvips writes no orientation into a PNG');
  const bomb = pngBomb();
  const meta = await sharp(bomb, { limitInputPixels: false }).metadata();
  t.same(
    await quickHeader(bomb),
    { format: 'png', width: meta.width, height: meta.height },
    'a bomb header, unread pixels'
  );
});

t.test('other formats, broken and non-image data are left to sharp', async (t) => {
  const jpeg = await base(64, 48).jpeg().toBuffer();
  t.equal(await quickHeader(await base(8, 8).webp().toBuffer()), undefined, 'WebP');
  t.equal(await quickHeader(await base(8, 8).gif().toBuffer()), undefined, 'GIF');
  t.equal(await quickHeader(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), undefined, 'SVG');
  t.equal(await quickHeader(Buffer.from('%PDF-1.7\n')), undefined, 'PDF');
  t.equal(await quickHeader(jpeg.subarray(0, 40)), undefined, 'a JPEG cut before its frame header');
  t.equal(await quickHeader(Buffer.alloc(0)), undefined, 'nothing');
  const png = await base(8, 8).png().toBuffer();
  t.equal(await quickHeader(png.subarray(0, 20)), undefined, 'a PNG cut inside its header');
});
