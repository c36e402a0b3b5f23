import { refused } from './load.js';

/** The engine's bounds on one call (the engine's config: docs/pdf.md, Engines). */
export interface EditCaps {
  /** Pages of any one input document. */
  maxPagesIn: number;
  /** Pages of the result: a merge's document, a split's parts together. */
  maxPagesOut: number;
  /** Bytes of the result: a split's parts together. */
  maxOutputBytes: number;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** Refused (413) once the input is parsed, before any page is copied. */
export function checkPagesIn(what: string, pages: number, caps: EditCaps): void {
  if (pages > caps.maxPagesIn)
    throw refused(`${what} has ${plural(pages, 'page')}, over the engine's cap of ${caps.maxPagesIn} a document.`, 413);
}

/** Refused (413) before any page is copied, when the result would have more pages than the cap. */
export function checkPagesOut(pages: number, caps: EditCaps): void {
  if (pages > caps.maxPagesOut)
    throw refused(`The result would have ${plural(pages, 'page')}, over the engine's cap of ${caps.maxPagesOut}.`, 413);
}

/** Refused (413) as soon as the parts written so far pass the cap: the rest are not written. */
export function checkBytesOut(bytes: number, caps: EditCaps): void {
  if (bytes > caps.maxOutputBytes)
    throw refused(`The result is over the engine's cap of ${caps.maxOutputBytes} bytes (${bytes} so far).`, 413);
}
