import { describeImages, imageType } from './images.js';

/**
 * Checks `inlineData` parts as generateContent does (`{ mimeType, data }`, base64 of an image
 * of that type) and returns what the fake "sees"; undefined when there are none, null after
 * `fail` when one is bad.
 */
export function inlineImages(
  contents: any[],
  fail: (status: number, message: string) => void
): string | null | undefined {
  const seen: Array<{ mime: string; bytes: Buffer }> = [];
  for (const [ci, c] of (contents ?? []).entries()) {
    for (const [pi, p] of (c.parts ?? []).entries()) {
      if (!p.inlineData) continue;
      const { mimeType, data } = p.inlineData;
      const bytes = Buffer.from(String(data ?? ''), 'base64');
      if (!mimeType || imageType(bytes) !== mimeType)
        return (
          fail(400, `Invalid value at 'contents[${ci}].parts[${pi}].inline_data': Unable to process input image.`), null
        );
      seen.push({ mime: mimeType, bytes });
    }
  }
  return seen.length ? describeImages(seen) : undefined;
}
