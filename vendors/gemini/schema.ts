// A JSON Schema as Gemini's `responseSchema`: the subset of the OpenAPI 3.0 Schema object that
// generationConfig took before `responseJsonSchema` (plain JSON Schema) existed. Only the
// models without `responseJsonSchema` (Gemini 1.x and 2.0) get this; see wire.ts.
//
// The Schema is a protobuf message: a key it does not know (`$schema`, `additionalProperties`,
// `const`) is a 400, not ignored, so only the known keys are kept. `$ref`s are inlined from
// `$defs` / `definitions`, a type list with `null` becomes `nullable`, several types become
// `anyOf`, `allOf` is merged, and `enum` is kept only for strings (the only enums Gemini takes).

type Json = Record<string, unknown>;

const KEEP = [
  'title',
  'description',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
  'minimum',
  'maximum',
  'pattern',
  'default',
  'example',
  'propertyOrdering',
];
const FORMATS: Record<string, string[]> = {
  STRING: ['date-time', 'enum'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
};
/** A recursive schema cannot be inlined for ever: below this many `$ref`s deep it ends in an open object. */
const MAX_REFS = 8;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolve(ref: string, root: Json): Json | undefined {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  const defs = m ? root[m[1]] : undefined;
  return m && isObject(defs) && isObject(defs[m[2]]) ? (defs[m[2]] as Json) : undefined;
}

/** `allOf` parts folded into one schema: their properties and required lists joined. */
function merge(s: Json, root: Json, refs: number): Json {
  const { allOf, ...rest } = s;
  let out: Json = rest;
  for (const raw of allOf as unknown[]) {
    const part = isObject(raw) && typeof raw.$ref === 'string' ? (resolve(raw.$ref, root) ?? {}) : raw;
    if (!isObject(part)) continue;
    const p = part.allOf ? merge(part, root, refs) : part;
    out = {
      ...p,
      ...out,
      properties: {
        ...(isObject(p.properties) ? p.properties : {}),
        ...(isObject(out.properties) ? out.properties : {}),
      },
      required: [
        ...(Array.isArray(p.required) ? p.required : []),
        ...(Array.isArray(out.required) ? out.required : []),
      ],
    };
  }
  return out;
}

function convert(s: unknown, root: Json, refs: number): Json {
  if (!isObject(s)) return { type: 'STRING' };
  if (typeof s.$ref === 'string') {
    const target = refs < MAX_REFS ? resolve(s.$ref, root) : undefined;
    const { $ref: _ref, ...rest } = s;
    return target
      ? convert({ ...target, ...rest }, root, refs + 1)
      : { type: 'OBJECT', ...(typeof s.description === 'string' ? { description: s.description } : {}) };
  }
  if (Array.isArray(s.allOf)) return convert(merge(s, root, refs), root, refs);
  const types = (Array.isArray(s.type) ? s.type : s.type !== undefined ? [s.type] : []).filter(
    (t): t is string => typeof t === 'string'
  );
  const nullable = types.includes('null') || s.nullable === true;
  const union = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (union) {
    const members = union.filter((m) => !(isObject(m) && m.type === 'null'));
    const out: Json = { anyOf: members.map((m) => convert(m, root, refs)) };
    if (typeof s.description === 'string') out.description = s.description;
    if (nullable || members.length < union.length) out.nullable = true;
    return out;
  }
  const real = types.filter((t) => t !== 'null');
  if (real.length > 1)
    return { anyOf: real.map((t) => convert({ ...s, type: t }, root, refs)), ...(nullable ? { nullable: true } : {}) };
  const type = (real[0] ?? (s.properties ? 'object' : s.items ? 'array' : 'string')).toUpperCase();
  const out: Json = { type };
  for (const k of KEEP) if (s[k] !== undefined) out[k] = s[k];
  if (nullable) out.nullable = true;
  if (typeof s.format === 'string' && FORMATS[type]?.includes(s.format)) out.format = s.format;
  const values = s.const !== undefined ? [s.const] : s.enum;
  if (type === 'STRING' && Array.isArray(values) && values.every((v) => typeof v === 'string')) out.enum = values;
  if (isObject(s.properties)) {
    out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, convert(v, root, refs)]));
    if (Array.isArray(s.required))
      out.required = [...new Set(s.required.filter((r) => typeof r === 'string' && r in (s.properties as Json)))];
  }
  if (s.items !== undefined) out.items = convert(Array.isArray(s.items) ? s.items[0] : s.items, root, refs);
  return out;
}

/** Gemini's OpenAPI-subset Schema for a JSON Schema. */
export function toGeminiSchema(schema: Json): Json {
  return convert(schema, schema, 0);
}
