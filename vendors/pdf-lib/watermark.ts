import type { PDFImage, PDFPage } from 'pdf-lib';
import type { PdfOutput, PdfPosition, PdfWatermarkInput } from '../../core/kit/vendor.js';
import { type EditCaps, checkBytesOut, checkPagesIn } from './caps.js';
import { loadPdf, pdfLib, refused, saved } from './load.js';

/** Space kept between a mark placed at an edge and that edge, as a fraction of the shorter side. */
const MARGIN = 0.04;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Where to draw a `w` x `h` mark rotated by `deg` (about its origin, as PDF draws it) so that
 * its bounding box sits at `position` inside the page's visible box.
 */
export function origin(page: Box, w: number, h: number, deg: number, position: PdfPosition) {
  const a = (deg * Math.PI) / 180;
  const [c, s] = [Math.cos(a), Math.sin(a)];
  const xs = [0, w * c, -h * s, w * c - h * s];
  const ys = [0, w * s, h * c, w * s + h * c];
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const [bw, bh] = [maxX - minX, maxY - minY];
  const m = MARGIN * Math.min(page.width, page.height);
  const col = position.endsWith('left') ? 'left' : position.endsWith('right') ? 'right' : 'middle';
  const row = position.startsWith('top') ? 'top' : position.startsWith('bottom') ? 'bottom' : 'middle';
  const bx = col === 'left' ? m : col === 'right' ? page.width - bw - m : (page.width - bw) / 2;
  const by = row === 'bottom' ? m : row === 'top' ? page.height - bh - m : (page.height - bh) / 2;
  return { x: page.x + bx - minX, y: page.y + by - minY };
}

/**
 * The mark's width: across the page (its diagonal, for a diagonal mark) when centred, a
 * quarter of it in a corner or at an edge, so it reads on a receipt and on a poster alike.
 */
function targetWidth(page: Box, deg: number, position: PdfPosition): number {
  if (position !== 'center') return page.width * 0.3;
  const diagonal = Math.abs(Math.sin((deg * Math.PI) / 90)) > 0.5;
  return (diagonal ? Math.hypot(page.width, page.height) : page.width) * 0.6;
}

function visible(page: PDFPage): Box {
  const b = page.getCropBox();
  return { x: b.x, y: b.y, width: b.width, height: b.height };
}

async function embedImage(doc: Awaited<ReturnType<typeof loadPdf>>, data: Buffer): Promise<PDFImage> {
  const png = data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const jpeg = data[0] === 0xff && data[1] === 0xd8;
  if (!png && !jpeg) throw refused('The watermark image is neither PNG nor JPEG.');
  try {
    return png ? await doc.embedPng(data) : await doc.embedJpg(data);
  } catch (e) {
    throw refused(`The watermark image cannot be decoded: ${String((e as Error)?.message ?? e).split('\n')[0]}`);
  }
}

/** Text (Helvetica, grey) or an image on every page, at the same place relative to each page's size. */
export async function watermarkPdf(input: PdfWatermarkInput, caps: EditCaps): Promise<PdfOutput> {
  const { StandardFonts, degrees, grayscale } = await pdfLib();
  if ((input.text === undefined) === (input.image === undefined))
    throw refused('A watermark needs exactly one of text or image.');
  const doc = await loadPdf(input.data, 'The document');
  checkPagesIn('The document', doc.getPageCount(), caps);
  const { rotation: deg, position, opacity } = input;
  if (input.text !== undefined) {
    const font = await doc.embedFont(StandardFonts.Helvetica);
    let unit: number;
    try {
      unit = font.widthOfTextAtSize(input.text, 1);
    } catch {
      // The standard fonts encode WinAnsi only; embedding a Unicode font is a larger job.
      throw refused(
        'The watermark text has characters outside Latin-1 (WinAnsi), which the standard font cannot draw.'
      );
    }
    for (const page of doc.getPages()) {
      const box = visible(page);
      const size = Math.max(6, Math.min(targetWidth(box, deg, position) / Math.max(unit, 0.01), box.height / 4));
      const at = origin(box, unit * size, font.heightAtSize(size, { descender: false }), deg, position);
      page.drawText(input.text, { ...at, size, font, color: grayscale(0.5), opacity, rotate: degrees(deg) });
    }
  } else {
    const image = await embedImage(doc, input.image!);
    for (const page of doc.getPages()) {
      const box = visible(page);
      // As wide as a text mark would be, but never taller than half the page.
      const scale = Math.min(targetWidth(box, 0, position) / image.width, (box.height * 0.5) / image.height);
      const [w, h] = [image.width * scale, image.height * scale];
      page.drawImage(image, {
        ...origin(box, w, h, deg, position),
        width: w,
        height: h,
        opacity,
        rotate: degrees(deg),
      });
    }
  }
  const result = await saved(doc);
  checkBytesOut(result.data.length, caps);
  return result;
}
