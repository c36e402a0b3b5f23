import type { OverlayOptions } from 'sharp';
import type { WatermarkOp, WatermarkPosition } from '../../core/capabilities/image.js';
import { DECODE, refused, type SharpEngine } from './engine.js';

type SharpFn = Awaited<ReturnType<SharpEngine['sharp']>>;

const GRAVITY: Record<WatermarkPosition, string> = {
  center: 'centre',
  top: 'north',
  bottom: 'south',
  left: 'west',
  right: 'east',
  top_left: 'northwest',
  top_right: 'northeast',
  bottom_left: 'southwest',
  bottom_right: 'southeast',
};

function xml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Text as an SVG the width of `size` of the image: white with a dark outline, readable on any picture. */
function textSvg(text: string, opacity: number, width: number): Buffer {
  // DejaVu Sans averages ~0.6 em a character: the font size that makes the text about `width` wide.
  const font = Math.max(6, Math.floor(width / (0.6 * Math.max(1, [...text].length))));
  const height = Math.ceil(font * 1.4);
  const stroke = Math.max(1, Math.round(font / 24));
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`
      + `<text x="50%" y="50%" dominant-baseline="central" text-anchor="middle" font-family="DejaVu Sans, sans-serif"`
      + ` font-size="${font}" fill="#ffffff" fill-opacity="${opacity}" stroke="#000000" stroke-opacity="${opacity}"`
      + ` stroke-width="${stroke}">${xml(text)}</text></svg>`
  );
}

/** An overlay image scaled to `size` of the base (never past its edges), its alpha times `opacity`. */
async function imageMark(
  engine: SharpEngine,
  sharp: SharpFn,
  bytes: Buffer,
  opacity: number,
  base: { width: number; height: number },
  width: number
) {
  await engine.probe(sharp, bytes, 'watermark image');
  const { data, info } = await sharp(bytes, DECODE)
    .autoOrient()
    .resize({ width, height: base.height, fit: 'inside', withoutEnlargement: false })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  for (let i = 3; i < data.length; i += 4) data[i] = Math.round(data[i] * opacity);
  return { input: data, raw: { width: info.width, height: info.height, channels: 4 as const } };
}

/** The composite layer of a watermark on an image of `base` size. */
export async function watermarkLayer(
  engine: SharpEngine,
  sharp: SharpFn,
  op: WatermarkOp,
  base: { width: number; height: number }
): Promise<OverlayOptions> {
  const width = Math.max(1, Math.round(base.width * op.size));
  const gravity = GRAVITY[op.position];
  if (op.image) return { ...(await imageMark(engine, sharp, op.image, op.opacity, base, width)), gravity };
  if (!op.text) throw refused('A watermark needs text or an image.');
  let svg = await sharp(textSvg(op.text, op.opacity, width))
    .png()
    .toBuffer({ resolveWithObject: true });
  // A mark taller or wider than the image it goes on: scaled down into it (sharp refuses a bigger overlay).
  if (svg.info.height > base.height || svg.info.width > base.width) {
    svg = await sharp(svg.data)
      .resize({ width: base.width, height: base.height, fit: 'inside' })
      .png()
      .toBuffer({ resolveWithObject: true });
  }
  return { input: svg.data, gravity };
}
