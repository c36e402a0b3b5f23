import fastJson from 'fast-json-stringify';

type Serializer = (data: unknown) => string;

// Every serializer made in this process, so a test can build them all (a schema
// fast-json-stringify rejects would otherwise show only on its route's first response).
const made: Array<() => Serializer> = [];

/**
 * Each route's response serializer is built on the route's first response, not at boot, as
 * the validators are (validation.ts): building one is fast-json-stringify generating and
 * compiling a function per schema, and with hundreds of routes that was ~130 ms of a cold
 * start for serializers a process mostly never uses. Fastify's own default builds the same
 * function from the same schema; the gateway registers no shared schemas ($ref), so none are
 * passed. test/core/http/validation.test.ts builds every one.
 */
export function serializerCompiler({ schema }: { schema: unknown }): Serializer {
  let built: Serializer | undefined;
  const build = () => (built ??= fastJson(schema as Parameters<typeof fastJson>[0]) as Serializer);
  made.push(build);
  return (data) => (built ?? build())(data);
}

/** Build every serializer made so far; throws on the first schema that cannot be built. */
export function buildAllSerializers(): number {
  for (const b of made) b();
  return made.length;
}
