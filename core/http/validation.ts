import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Two validators: bodies are strict (a wrong type is a 400, unknown fields are rejected,
// nothing is coerced or removed), while query strings and path parameters arrive as
// strings and are coerced to the schema's numbers and booleans.
function make(opts: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ...opts });
  addFormats(ajv);
  ajv.addKeyword('x-secret');
  return ajv;
}

const strict = make({ coerceTypes: false });
const coercing = make({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  return ajv.compile(schema) as any;
};
