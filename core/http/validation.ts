import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Two validators: bodies are strict (a wrong type is a 400, unknown fields are rejected,
// nothing is coerced or removed), while query strings and path parameters arrive as
// strings and are coerced to the schema's numbers and booleans.
function make(opts: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
    discriminator: true,
    ...opts,
  });
  addFormats(ajv);
  ajv.addKeyword('x-secret');
  return ajv;
}

// Made on the first compile (a route's first request): an Ajv instance costs ~20 ms to set up.
let strict: Ajv | undefined;
let coercing: Ajv | undefined;

/**
 * Each route's validator is compiled on the route's first request, not at boot: the gateway
 * has hundreds of schemas and a process uses few of them, and compiled validators are a good
 * part of a cold start's time and of the idle heap. The schemas are our own and TypeBox-built;
 * test/core/http/validation.test.ts compiles every one of them.
 */
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  let compiled: ReturnType<Ajv['compile']> | undefined;
  const compile = () =>
    (compiled ??= (
      httpPart === 'body' ? (strict ??= make({ coerceTypes: false })) : (coercing ??= make({ coerceTypes: 'array' }))
    ).compile(schema));
  made.push(compile);
  const validate = (data: unknown) => {
    if (httpPart === 'body') {
      const deep = tooDeep(data);
      if (deep) {
        validate.errors = [deep];
        return false;
      }
    }
    compiled ??= compile();
    const ok = compiled(data);
    validate.errors = compiled.errors;
    return ok;
  };
  validate.errors = null as unknown;
  return validate as any;
};

/** How deep a JSON body may nest objects and arrays (`{"a":{}}` is 2). */
export const MAX_JSON_DEPTH = 64;

/**
 * The first place a body nests deeper than MAX_JSON_DEPTH, as an Ajv issue naming its top-level
 * field. Walked with a stack, not recursion: a body 100,000 levels deep must not overflow here,
 * nor reach the code that serializes it again (a RangeError there was a 500).
 */
type DepthIssue = { instancePath: string; keyword: string; message: string; params: Record<string, unknown> };

function tooDeep(data: unknown): DepthIssue | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const stack: Array<[unknown, number, string]> = [[data, 1, '']];
  while (stack.length) {
    const [v, depth, top] = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) {
      const message = `nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep (the limit)`;
      return { instancePath: top, keyword: 'maxDepth', message, params: { limit: MAX_JSON_DEPTH } };
    }
    for (const k in v as object) {
      const child = (v as Record<string, unknown>)[k];
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1, top || `/${k}`]);
    }
  }
  return undefined;
}

// Every validator made in this process, so a test can compile them all (a bad schema would
// otherwise show only on its route's first request). Closures over schemas Fastify keeps anyway.
const made: Array<() => unknown> = [];

/** Compile every validator made so far; throws on the first schema Ajv rejects. */
export function compileAllValidators(): number {
  for (const c of made) c();
  return made.length;
}
