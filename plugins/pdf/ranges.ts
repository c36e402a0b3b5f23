import { type PageRange, apiError } from '../../core/kit/area.js';

const RANGE = /^\s*(\d{1,6})\s*(?:(-)\s*(\d{1,6})?)?\s*$/;

/**
 * `1-3` (closed), `4-` (to the last page), `5` (one page): 1-based. The syntax is checked
 * here (400); whether a range fits the document is the engine's to say (422), as only the
 * parsed document knows its page count.
 */
export function parseRanges(ranges: string[]): PageRange[] {
  const errors: { param: string; message: string }[] = [];
  const out: PageRange[] = [];
  for (const [i, text] of ranges.entries()) {
    const m = RANGE.exec(text);
    const from = m ? Number(m[1]) : 0;
    const to = m?.[3] !== undefined ? Number(m[3]) : m?.[2] ? undefined : from;
    if (!m || from < 1 || (to !== undefined && to < from)) {
      const why = !m
        ? 'is not a page range like 1-3, 4- or 5'
        : from < 1
          ? 'starts before page 1'
          : 'ends before it starts';
      errors.push({ param: `ranges[${i}]`, message: why });
      continue;
    }
    out.push(to === undefined ? { from } : { from, to });
  }
  if (errors.length) {
    const first = errors[0];
    throw apiError(
      'validation_failed',
      `${first.param} (${JSON.stringify(ranges[Number(first.param.slice(7, -1))])}) ${first.message}.`,
      {
        param: first.param,
        details: { errors },
      }
    );
  }
  return out;
}
