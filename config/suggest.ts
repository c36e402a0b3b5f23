import { distance } from 'fastest-levenshtein';

/**
 * The candidate a typo most likely meant (`prot` → `port`, `opnai` → `openai`), or undefined
 * when none is close: at most half the word's length in edits, and never more than 3, so a
 * name that is merely different is not "corrected".
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 2)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= limit ? best : undefined;
}

/** `; did you mean "port"?` or nothing: appended to an error message. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const n = nearest(word, candidates);
  return n === undefined ? '' : `; did you mean "${n}"?`;
}
