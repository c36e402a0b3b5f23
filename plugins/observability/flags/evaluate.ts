import { hash } from 'node:crypto';

// Flag evaluation: pure, in memory, no I/O, so it serves the gateway's own route, OFREP and
// (later) the analytics area's PostHog flags call alike. Rules are tried in order; the first
// whose conditions all hold serves; else the fallthrough. A percentage rollout places a
// context in a bucket from 0 to 100 by a hash of the flag key and the targeting key (as
// PostHog does: sha1 of "key.id", 15 hex digits over 16^15), and gives the variants ranges in
// the order listed: a rollout that grows only widens the first variants' ranges, so no one
// already in leaves, and each flag's key puts everyone in a bucket of its own for it.

export type FlagType = 'boolean' | 'string' | 'number' | 'json';
export const OPS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'contains',
  'starts_with',
  'ends_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'not_exists',
] as const;
export type Op = (typeof OPS)[number];

export interface Condition {
  attribute: string;
  op: Op;
  value?: string | number | boolean;
  values?: (string | number | boolean)[];
}

export interface Serve {
  variant?: string;
  rollout?: { variant: string; weight: number }[];
}

export interface Rule {
  description?: string;
  conditions: Condition[];
  serve: Serve;
}

export interface FlagDefinition {
  key: string;
  type: FlagType;
  enabled: boolean;
  variants: Record<string, unknown>;
  off_variant: string;
  rules: Rule[];
  fallthrough: Serve;
}

export type Reason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DEFAULT' | 'DISABLED';

export type Context = Record<string, unknown>;

export interface Evaluation {
  key: string;
  value: unknown;
  variant: string;
  reason: Reason;
  /** A boolean flag's value; for other types whether the flag is on (its kill switch). */
  enabled: boolean;
}

/** A context without the id a rollout buckets by. */
export class TargetingKeyMissing extends Error {
  constructor(readonly flagKey: string) {
    super(`Flag ${flagKey} splits by percentage and needs a targeting key (distinct_id).`);
  }
}

const SCALE = 16 ** 15 - 1;

/** Where a targeting key falls for a flag, in [0, 100). */
export function bucketOf(flagKey: string, targetingKey: string): number {
  // One-shot: no Hash object per evaluation (this runs on every call of a rollout).
  const h = hash('sha1', `${flagKey}.${targetingKey}`, 'hex').slice(0, 15);
  return (Number.parseInt(h, 16) / SCALE) * 100;
}

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

// Query strings carry every attribute as a string: `country=DE` equals "DE", `age=30` equals 30.
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof b === 'number') return asNumber(a) === b;
  if (typeof b === 'boolean') return String(a) === String(b);
  return typeof a === 'number' || typeof a === 'boolean' ? String(a) === b : false;
}

export function holds(c: Condition, ctx: Context): boolean {
  const v = ctx[c.attribute];
  if (c.op === 'exists') return v !== undefined && v !== null;
  if (c.op === 'not_exists') return v === undefined || v === null;
  if (v === undefined || v === null) return c.op === 'neq' || c.op === 'not_in';
  switch (c.op) {
    case 'eq':
      return same(v, c.value);
    case 'neq':
      return !same(v, c.value);
    case 'in':
      return (c.values ?? []).some((x) => same(v, x));
    case 'not_in':
      return !(c.values ?? []).some((x) => same(v, x));
    case 'contains':
      return String(v).includes(String(c.value));
    case 'starts_with':
      return String(v).startsWith(String(c.value));
    case 'ends_with':
      return String(v).endsWith(String(c.value));
    default: {
      const a = asNumber(v);
      const b = asNumber(c.value);
      if (a === undefined || b === undefined) return false;
      return c.op === 'gt' ? a > b : c.op === 'gte' ? a >= b : c.op === 'lt' ? a < b : a <= b;
    }
  }
}

function serve(flag: FlagDefinition, s: Serve, targetingKey: string | undefined): { variant: string; split: boolean } {
  if (s.variant !== undefined || !s.rollout) return { variant: s.variant!, split: false };
  if (targetingKey === undefined || targetingKey === '') throw new TargetingKeyMissing(flag.key);
  const b = bucketOf(flag.key, targetingKey);
  let upTo = 0;
  for (const part of s.rollout) {
    upTo += part.weight;
    if (b < upTo) return { variant: part.variant, split: true };
  }
  // Weights sum to 100; only rounding could leave the very top: the last range takes it.
  return { variant: s.rollout[s.rollout.length - 1].variant, split: true };
}

function result(flag: FlagDefinition, variant: string, reason: Reason): Evaluation {
  const value = flag.variants[variant];
  return {
    key: flag.key,
    value,
    variant,
    reason,
    enabled: flag.type === 'boolean' ? value === true : flag.enabled,
  };
}

/** Evaluates a flag for a context; `targetingKey` is the id rollouts bucket by. Throws TargetingKeyMissing. */
export function evaluateFlag(flag: FlagDefinition, ctx: Context, targetingKey: string | undefined): Evaluation {
  if (!flag.enabled) return result(flag, flag.off_variant, 'DISABLED');
  for (const rule of flag.rules)
    if (rule.conditions.every((c) => holds(c, ctx))) {
      const s = serve(flag, rule.serve, targetingKey);
      return result(flag, s.variant, s.split ? 'SPLIT' : 'TARGETING_MATCH');
    }
  const s = serve(flag, flag.fallthrough, targetingKey);
  return result(flag, s.variant, s.split ? 'SPLIT' : flag.rules.length ? 'DEFAULT' : 'STATIC');
}
