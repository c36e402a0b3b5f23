import type { OverlayOptions } from 'sharp';
import type { WatermarkOp, WatermarkPosition } from '../../core/kit/vendor.js';
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

function markup(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Text the width of `size` of the image: white with a dark outline, readable on any picture, as
 * raw RGBA. Pango draws the glyphs (a coverage mask) and the outline is the mask dilated: no SVG
 * is parsed, so libvips' SVG loader stays blocked (image-sniff.ts).
 */
async function textMark(sharp: SharpFn, text: string, opacity: number, width: number) {
  // DejaVu Sans averages ~0.6 em a character: the font size that makes the text about `width` wide.
  const font = Math.max(6, Math.floor(width / (0.6 * Math.max(1, [...text].length))));
  const stroke = Math.max(1, Math.round(font / 24));
  const glyphs = await sharp({ text: { text: markup(text), font: `DejaVu Sans ${font}px`, dpi: 72 } })
    .extend({ top: stroke, bottom: stroke, left: stroke, right: stroke, background: '#000000' })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = glyphs.info;
  const outline = await sharp(glyphs.data, { raw: { width: w, height: h, channels: 1 } })
    .dilate(stroke)
    .raw()
    .toBuffer();
  const rgba = Buffer.alloc(w * h * 4);
  for (let i = 0; i < w * h; i++) {
    const cover = Math.max(glyphs.data[i], outline[i]);
    const white = cover ? Math.round((255 * glyphs.data[i]) / cover) : 0;
    rgba[4 * i] = rgba[4 * i + 1] = rgba[4 * i + 2] = white;
    rgba[4 * i + 3] = Math.round(cover * opacity);
  }
  return { data: rgba, width: w, height: h };
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
  const mark = await textMark(sharp, op.text, op.opacity, width);
  const raw = { width: mark.width, height: mark.height, channels: 4 as const };
  // A mark taller or wider than the image it goes on: scaled down into it (sharp refuses a bigger overlay).
  if (mark.width <= base.width && mark.height <= base.height) return { input: mark.data, raw, gravity };
  const fitted = await sharp(mark.data, { raw })
    .resize({ width: base.width, height: base.height, fit: 'inside' })
    .png()
    .toBuffer();
  return { input: fitted, gravity };
}
