import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TObject } from '@sinclair/typebox';
import { apiError, IMAGE_MAX_INPUT_BYTES, fieldError } from '../../core/kit/area.js';
import { splitMultipart } from './multipart.js';
import { UploadSlabs } from './upload-slabs.js';

/** The names a form's image may travel under: ours, and Stripe's and Cloudinary's `file`. */
export const FILE_FIELDS = ['input', 'file'] as const;
/** The part that may carry every other field as one JSON object. */
export const OPTIONS_FIELD = 'options';

/** The image of a multipart request, kept beside its body: the body holds only the fields the schema validates. */
const uploads = new WeakMap<FastifyRequest, Buffer>();
/** Requests whose image was handed to the service, and so maybe to an engine that may still read it. */
const handedOut = new WeakSet<FastifyRequest>();

export function uploadedImage(req: FastifyRequest): Buffer | undefined {
  const image = uploads.get(req);
  if (image) handedOut.add(req);
  return image;
}

/**
 * What an idempotency key's body hash adds for a multipart request: the image's digest, so a
 * retry with another image under the same key is refused. Computed only when a key is sent.
 */
export function uploadDigest(req: FastifyRequest): string | undefined {
  const bytes = uploads.get(req);
  return bytes && createHash('sha256').update(bytes).digest('hex');
}

/**
 * A text field as the JSON value its schema wants: form fields are strings, so numbers,
 * booleans and (for lists such as `operations`) JSON are read from them. A string that is
 * not what the schema wants is left as it is, for the validator to refuse with its message.
 */
function coerce(schema: TObject, name: string, text: string): unknown {
  const type = (schema.properties[name] as { type?: string } | undefined)?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  if (type === 'array' || type === 'object') {
    try {
      return JSON.parse(text);
    } catch {
      throw fieldError(name, 'is not valid JSON');
    }
  }
  return text;
}

/**
 * The body of a multipart/form-data request to an image route: one file part (`input` or
 * `file`), the other fields as form fields or as one JSON `options` part. Returns the fields
 * as the JSON body would have them, without `input`, for `fields` (the form's schema) to
 * validate; the image's bytes are kept for uploadedImage.
 */
export function formBody(req: FastifyRequest, raw: Buffer, fields: TObject): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  let image: Buffer | undefined;
  for (const p of splitMultipart(raw, String(req.headers['content-type']))) {
    if ((FILE_FIELDS as readonly string[]).includes(p.name)) {
      if (p.filename === undefined) throw fieldError(p.name, 'must be a file part (with a filename), not a text field');
      if (image) throw fieldError(p.name, 'is a second image: send one file part, `input` or `file`');
      if (p.data.length > IMAGE_MAX_INPUT_BYTES)
        throw apiError(
          'payload_too_large',
          `${p.name} is ${p.data.length} bytes, over the cap of ${IMAGE_MAX_INPUT_BYTES} bytes an image.`,
          { param: p.name, details: { max_bytes: IMAGE_MAX_INPUT_BYTES } }
        );
      image = p.data;
      continue;
    }
    const entries: Array<[string, unknown]> = [];
    if (p.name === OPTIONS_FIELD) {
      let options: unknown;
      try {
        options = JSON.parse(p.data.toString('utf8'));
      } catch {
        throw fieldError(OPTIONS_FIELD, 'is not valid JSON');
      }
      if (!options || typeof options !== 'object' || Array.isArray(options))
        throw fieldError(OPTIONS_FIELD, 'must be a JSON object of the request fields');
      entries.push(...Object.entries(options));
    } else if (p.filename !== undefined)
      throw fieldError(p.name, `is a file part; only ${FILE_FIELDS.join(' or ')} takes one`);
    else entries.push([p.name, coerce(fields, p.name, p.data.toString('utf8'))]);
    for (const [k, v] of entries) {
      if ((FILE_FIELDS as readonly string[]).includes(k)) throw fieldError(k, 'must be sent as a file part');
      if (Object.hasOwn(body, k)) throw fieldError(k, 'is given twice');
      // `__proto__` as a plain key, never a prototype: the JSON parser's rule, kept for forms.
      Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }
  if (!image) throw fieldError('input', 'is required: send the image as a file part named `input` (or `file`)');
  uploads.set(req, image);
  return body;
}

/**
 * In this scope (the image routes), multipart/form-data bodies are read whole under the route's
 * cap, into a reused buffer when they are large (upload-slabs.ts; `keepBytes` of them kept), and split.
 * A buffer goes back after a 200, or after any answer given before the image was handed out (a
 * field the schema refuses, a 503): a refused upload must not cost a fresh buffer each time, whose
 * memory outside V8's heap brings full collections on (1.2 MiB uploads refused 4 at a time: a
 * mark-compact every ~130 refusals).
 */
export function acceptImageForms(
  scope: FastifyInstance,
  fields: (req: FastifyRequest) => TObject,
  keepBytes: number
): UploadSlabs {
  const slabs = new UploadSlabs(keepBytes);
  scope.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    slabs.read(req, payload, req.routeOptions.bodyLimit).then(
      (raw) => {
        let body: Record<string, unknown>;
        try {
          body = formBody(req, raw, fields(req));
        } catch (e) {
          slabs.settle(req, true); // refused before any engine saw it
          return done(e as Error, undefined);
        }
        done(null, body);
      },
      (e) => done(e as Error, undefined)
    );
  });
  scope.addHook('onResponse', (req, reply, next) => {
    slabs.settle(req, reply.statusCode === 200 || !handedOut.has(req));
    next();
  });
  return slabs;
}
