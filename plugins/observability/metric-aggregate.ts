import type { Agg } from './metric-schemas.js';

// Folding stored buckets into the series a query asks for. The database sums, counts and
// takes the least and greatest value per (bucket, tag set); when a query groups by fewer
// tags, several tag sets fold into one series here, which those four survive (an average is
// kept as sum and count until the end). Percentiles need every value, which the caller
// fetches instead.

export interface Partial {
  bucket: number;
  tags: string;
  sum: number;
  n: number;
  lo: number;
  hi: number;
}

export interface Series {
  tags: Record<string, string>;
  points: { bucket: number; value: number }[];
}

/** The tags a series is keyed by: all of them, or only those named in group_by. */
export function seriesKey(tagsJson: string, groupBy: string[] | undefined): string {
  if (!groupBy) return tagsJson;
  const tags = JSON.parse(tagsJson) as Record<string, string>;
  const picked: Record<string, string> = {};
  for (const k of groupBy) if (tags[k] !== undefined) picked[k] = tags[k];
  return JSON.stringify(picked);
}

function finish(agg: Agg, p: Omit<Partial, 'bucket' | 'tags'>): number {
  switch (agg) {
    case 'sum':
      return p.sum;
    case 'count':
      return p.n;
    case 'min':
      return p.lo;
    case 'max':
      return p.hi;
    default:
      return p.sum / p.n;
  }
}

/** Series ordered by their key, points by bucket. */
export function toSeries(groups: Map<string, Map<number, number>>): Series[] {
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, buckets]) => ({
      tags: JSON.parse(key),
      points: [...buckets.entries()].sort(([a], [b]) => a - b).map(([bucket, value]) => ({ bucket, value })),
    }));
}

export function foldPartials(rows: Partial[], agg: Exclude<Agg, 'p50' | 'p95'>, groupBy?: string[]): Series[] {
  const acc = new Map<string, Map<number, Omit<Partial, 'bucket' | 'tags'>>>();
  for (const r of rows) {
    const key = seriesKey(r.tags, groupBy);
    let buckets = acc.get(key);
    if (!buckets) acc.set(key, (buckets = new Map()));
    const b = buckets.get(r.bucket);
    if (!b) buckets.set(r.bucket, { sum: r.sum, n: r.n, lo: r.lo, hi: r.hi });
    else {
      b.sum += r.sum;
      b.n += r.n;
      b.lo = Math.min(b.lo, r.lo);
      b.hi = Math.max(b.hi, r.hi);
    }
  }
  const out = new Map<string, Map<number, number>>();
  for (const [key, buckets] of acc) out.set(key, new Map([...buckets].map(([bucket, p]) => [bucket, finish(agg, p)])));
  return toSeries(out);
}

/** The q-quantile of sorted values, linearly interpolated between the closest ranks (numpy's default). */
export function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

export function foldPercentiles(
  rows: { bucket: number; tags: string; value: number }[],
  q: number,
  groupBy?: string[]
): Series[] {
  const acc = new Map<string, Map<number, number[]>>();
  for (const r of rows) {
    const key = seriesKey(r.tags, groupBy);
    let buckets = acc.get(key);
    if (!buckets) acc.set(key, (buckets = new Map()));
    const vs = buckets.get(r.bucket);
    if (vs) vs.push(r.value);
    else buckets.set(r.bucket, [r.value]);
  }
  const out = new Map<string, Map<number, number>>();
  for (const [key, buckets] of acc)
    out.set(
      key,
      new Map(
        [...buckets].map(([bucket, vs]) => [
          bucket,
          quantile(
            vs.sort((a, b) => a - b),
            q
          ),
        ])
      )
    );
  return toSeries(out);
}
