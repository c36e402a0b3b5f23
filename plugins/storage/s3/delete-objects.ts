import { S3Error, S3_NS, XML_HEAD, tags } from './errors.js';
import type { S3Request } from './request.js';
import { xmlBody } from './body.js';
import { keyProblem } from '../../../core/kit/area.js';
import type { BucketRow } from '../service.js';

const MAX_KEYS = 1000;

/**
 * DeleteObjects (POST /bucket?delete): up to 1000 keys in one request, each deleted (and
 * metered) like a DeleteObject. Missing keys count as deleted, as in S3; a key that cannot
 * exist is reported in an <Error> element while the others go ahead. Quiet mode lists
 * only the errors.
 */
export async function deleteObjects(r: S3Request, b: BucketRow): Promise<unknown> {
  const doc = await xmlBody(r.req.raw, r.auth!);
  const objects = doc.Delete?.Object;
  if (!Array.isArray(objects) || objects.some((o: any) => typeof o?.Key !== 'string')) {
    throw new S3Error(
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema.'
    );
  }
  // Per-object conditions (S3's conditional deletes): a delete that would ignore them is not one.
  for (const o of objects) {
    const cond = ['ETag', 'LastModifiedTime', 'Size'].find((c) => o[c] !== undefined);
    if (cond)
      throw new S3Error(
        'NotImplemented',
        `The ${cond} condition on an object of DeleteObjects is not implemented by this endpoint: `
          + 'send DeleteObject with If-Match, or the keys alone.',
        { ArgumentName: cond }
      );
  }
  if (objects.length > MAX_KEYS)
    throw new S3Error('MalformedXML', `A DeleteObjects request can name at most ${MAX_KEYS} keys.`);
  const quiet = String(doc.Delete.Quiet ?? '').trim() === 'true';
  const out: string[] = [];
  for (const o of objects as Array<{ Key: string }>) {
    const problem = keyProblem(o.Key);
    if (problem) {
      out.push(
        `<Error>${tags({ Key: o.Key, Code: 'InvalidArgument', Message: `The object key ${problem}.` })}</Error>`
      );
      continue;
    }
    try {
      await r.storage.deleteObject(b, o.Key);
      if (!quiet) out.push(`<Deleted>${tags({ Key: o.Key })}</Deleted>`);
    } catch (e) {
      r.req.log.warn({ err: (e as Error).message }, 'DeleteObjects: one key failed');
      out.push(
        `<Error>${tags({ Key: o.Key, Code: 'InternalError', Message: 'We encountered an internal error. Please try again.' })}</Error>`
      );
    }
  }
  return r.reply
    .type('application/xml')
    .send(`${XML_HEAD}<DeleteResult xmlns="${S3_NS}">${out.join('')}</DeleteResult>`);
}
