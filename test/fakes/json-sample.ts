/**
 * A value that fits a schema, as a model under constrained decoding would write one: for
 * JSON Schema (`$ref`s into `$defs`) and for Gemini's OpenAPI subset (upper-case types). Every property is filled;
 * an object with no properties gets `{ ok: true }`.
 */
export function sample(schema: unknown, root: any = schema): unknown {
  const s = (schema ?? {}) as Record<string, any>;
  const ref = typeof s.$ref === 'string' ? /^#\/(\$defs|definitions)\/(.+)$/.exec(s.$ref) : null;
  if (ref) return sample(root?.[ref[1]]?.[ref[2]], root);
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const anyOf = s.anyOf ?? s.oneOf;
  if (Array.isArray(anyOf) && anyOf.length) return sample(anyOf[0], root);
  const type = String(
    (Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type) ?? (s.properties ? 'object' : 'string')
  ).toLowerCase();
  switch (type) {
    case 'object': {
      const props = Object.entries((s.properties ?? {}) as Record<string, unknown>);
      return props.length ? Object.fromEntries(props.map(([k, v]) => [k, sample(v, root)])) : { ok: true };
    }
    case 'array':
      return [sample(s.items, root)];
    case 'integer':
      return 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    default:
      return 'text';
  }
}

/** The answer cut at the first stop sequence it holds, as every vendor does (the sequence left out). */
export function cutAtStop(text: string, stops: string[] | undefined): { text: string; stop?: string } {
  let at = -1;
  let hit: string | undefined;
  for (const s of stops ?? []) {
    const i = text.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) {
      at = i;
      hit = s;
    }
  }
  return hit === undefined ? { text } : { text: text.slice(0, at), stop: hit };
}
