import { describeImages, imageType } from './images.js';

const TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/**
 * Checks `image` content blocks as the Messages API does (`source: { type: 'base64',
 * media_type, data }`, the data must be an image of that type) and returns what the fake
 * "sees"; undefined when there are none, null after `fail` when one is bad.
 */
export function imageBlocks(
  messages: any[],
  fail: (status: number, message: string) => void
): string | null | undefined {
  const seen: Array<{ mime: string; bytes: Buffer }> = [];
  for (const [mi, m] of (messages ?? []).entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [bi, b] of m.content.entries()) {
      if (b.type !== 'image') continue;
      const at = `messages.${mi}.content.${bi}.image.source`;
      if (m.role !== 'user') return (fail(400, `${at}: images are only allowed in user turns`), null);
      const src = b.source;
      if (src?.type !== 'base64') return (fail(400, `${at}.type: Input should be 'base64'`), null);
      if (!TYPES.includes(src.media_type))
        return (fail(400, `${at}.base64.media_type: Input should be ${TYPES.map((t) => `'${t}'`).join(', ')}`), null);
      if (typeof src.data !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(src.data))
        return (fail(400, `${at}.base64.data: invalid base64 data`), null);
      const bytes = Buffer.from(src.data, 'base64');
      const actual = imageType(bytes);
      if (actual !== src.media_type)
        return (
          fail(
            400,
            `${at}.base64: The image was specified using the ${src.media_type} media type, but the image appears to be a ${actual ?? 'unknown'} image`
          ),
          null
        );
      seen.push({ mime: src.media_type, bytes });
    }
  }
  return seen.length ? describeImages(seen) : undefined;
}
