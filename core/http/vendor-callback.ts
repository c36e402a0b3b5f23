import type { FastifyRequest } from 'fastify';
import type { Svc } from '../context.js';
import { apiError } from '../errors.js';
import { classifyGeneric } from '../router/failure.js';

const VERIFY_MS = 10_000;

/**
 * A vendor's callback (a status report, an event webhook) handed to the instance that can verify
 * it: `capability` of the instance named in the path reads the public URL, headers and raw body
 * (signatures cover them) and answers what it says. An instance without the capability is 404; a
 * body its vendor did not sign is 401 `unauthenticated`, before anything changes.
 */
export async function readVendorCallback<O>(
  svc: Svc,
  req: FastifyRequest<{ Params: { instance: string } }>,
  capability: string,
  what: string
): Promise<{ instance: string; output: O }> {
  const inst = svc.vendors.get(req.params.instance);
  const read = inst?.instance.capabilities[capability];
  if (!inst || !read) throw apiError('not_found', `No vendor instance ${req.params.instance} takes ${what} here.`);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
  try {
    const output = (await read.invoke(
      { url: `${svc.config.server.public_url}${req.url}`, headers, body: typeof req.body === 'string' ? req.body : '' },
      { signal: AbortSignal.timeout(VERIFY_MS), deadline: Date.now() + VERIFY_MS }
    )) as O;
    return { instance: inst.id, output };
  } catch (e) {
    if (classifyGeneric(e) === 'auth') throw apiError('unauthenticated', `The ${what} are not signed by the vendor.`);
    throw e;
  }
}
