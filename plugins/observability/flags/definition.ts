import { fieldError } from '../../../core/kit/area.js';
import type { FlagDefinition, FlagType, Serve } from './evaluate.js';
import type { FlagCreateT } from './flag-schemas.js';

// What the schema cannot say about a flag: values of its type, variants that exist, rollouts
// summing to 100, conditions with the operand their operator needs.

const BOOL_VARIANTS = { on: true, off: false };

function valueFits(type: FlagType, v: unknown): boolean {
  if (type === 'boolean') return typeof v === 'boolean';
  if (type === 'string') return typeof v === 'string';
  if (type === 'number') return typeof v === 'number' && Number.isFinite(v);
  return v !== undefined;
}

function checkServe(s: Serve, variants: Record<string, unknown>, param: string) {
  if ((s.variant === undefined) === (s.rollout === undefined))
    throw fieldError(param, 'needs exactly one of variant or rollout');
  const names = s.variant !== undefined ? [s.variant] : s.rollout!.map((r) => r.variant);
  for (const n of names)
    if (!(n in variants)) throw fieldError(param, `names variant "${n}", which the flag does not have`);
  if (s.rollout) {
    const sum = s.rollout.reduce((a, r) => a + r.weight, 0);
    if (Math.abs(sum - 100) > 1e-9) throw fieldError(`${param}.rollout`, `weights sum to ${sum}, not 100`);
  }
}

/** A create or update body as a complete, checked definition. */
export function definitionOf(
  key: string,
  b: Omit<FlagCreateT, 'key'>
): FlagDefinition & { description: string | null } {
  const variants = b.variants ?? (b.type === 'boolean' ? BOOL_VARIANTS : undefined);
  if (!variants || !Object.keys(variants).length) throw fieldError('variants', `are required for a ${b.type} flag`);
  for (const [name, v] of Object.entries(variants))
    if (!valueFits(b.type, v)) throw fieldError(`variants.${name}`, `is not a ${b.type} value`);
  const offVariant = b.off_variant ?? (b.type === 'boolean' && 'off' in variants ? 'off' : undefined);
  if (offVariant === undefined)
    throw fieldError('off_variant', 'is required (the variant served when the flag is off)');
  if (!(offVariant in variants))
    throw fieldError('off_variant', `names variant "${offVariant}", which the flag does not have`);
  const fallthrough = b.fallthrough ?? (b.type === 'boolean' && 'on' in variants ? { variant: 'on' } : undefined);
  if (!fallthrough) throw fieldError('fallthrough', 'is required (what a context no rule matches gets)');
  checkServe(fallthrough, variants, 'fallthrough');
  const rules = b.rules ?? [];
  rules.forEach((r, i) => {
    checkServe(r.serve, variants, `rules[${i}].serve`);
    r.conditions.forEach((c, j) => {
      const param = `rules[${i}].conditions[${j}]`;
      const list = c.op === 'in' || c.op === 'not_in';
      const none = c.op === 'exists' || c.op === 'not_exists';
      if (list && c.values === undefined) throw fieldError(param, `needs values for ${c.op}`);
      if (!list && !none && c.value === undefined) throw fieldError(param, `needs a value for ${c.op}`);
    });
  });
  return {
    key,
    type: b.type,
    description: b.description ?? null,
    enabled: b.enabled ?? true,
    variants,
    off_variant: offVariant,
    rules,
    fallthrough,
  };
}
