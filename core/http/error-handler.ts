import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, apiError, errorBody, isApiError } from '../errors.js';
import { isClientGone } from './client-gone.js';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/messages/0/role` → `messages[0].role`; a missing or unknown property names itself. */
function paramOf(v: AjvIssue, part: string | undefined): string {
  let p = v.instancePath
    .replace(/^\//, '')
    .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
    .replace(/\//g, '.')
    .replace(/^(\d+)/, '[$1]');
  // A discriminated union (`oneOf` + `discriminator`) blames its tag field.
  const tag = v.keyword === 'discriminator' ? v.params.tag : undefined;
  const extra = (v.params.missingProperty ?? v.params.additionalProperty ?? tag) as string | undefined;
  if (extra) p = p ? `${p}.${extra}` : extra;
  return p || (part === 'body' ? 'body' : (part ?? 'request'));
}

function issueMessage(v: AjvIssue): string {
  if (v.keyword === 'additionalProperties') return 'is not a known field';
  if (v.keyword === 'required') return 'is required';
  if (v.keyword === 'discriminator') {
    if (v.params.tagValue === undefined) return 'is required';
    return `is not a known ${v.params.tag}: ${JSON.stringify(v.params.tagValue)}`;
  }
  if (v.keyword === 'enum')
    return `must be one of ${(v.params.allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(', ')}`;
  return v.message ?? 'is invalid';
}

export function toApiError(
  err: FastifyError & { validation?: AjvIssue[]; validationContext?: string },
  req?: FastifyRequest
): ApiError {
  if (isApiError(err)) return err;
  if (err.validation) {
    const seen = new Set<string>();
    const errors = err.validation
      // anyOf/oneOf repeat each branch's complaint; keep the summary and one line per field.
      .filter((v) => v.keyword !== 'anyOf' || err.validation!.length === 1)
      .map((v) => ({ param: paramOf(v, err.validationContext), message: issueMessage(v) }))
      .filter((e) => (seen.has(e.param + e.message) ? false : (seen.add(e.param + e.message), true)));
    const first = errors[0];
    return apiError(
      'validation_failed',
      `${first.param} ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}.`,
      {
        param: first.param,
        details: { errors },
      }
    );
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return apiError(
        'payload_too_large',
        `The request body is over this endpoint's cap of ${req?.routeOptions.bodyLimit ?? 'the configured'} bytes.`
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return apiError('unsupported_media_type', 'Send the request body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return apiError('invalid_request', 'The body is empty but the content type says JSON; send {} for no fields.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return apiError('invalid_request', `The body is not valid JSON: ${err.message}`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return apiError('invalid_request', 'The content-length header does not match the body.');
    case 'FST_ERR_BAD_URL':
      return apiError('invalid_request', 'The path has a malformed %-escape (% must be followed by two hex digits).');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return apiError(
        'uri_too_long',
        `A path segment is longer than the ${MAX_PARAM_LENGTH} characters the router accepts.`
      );
  }
  if (err instanceof SyntaxError || err.statusCode === 400)
    return apiError('invalid_request', `The request is malformed: ${err.message}`);
  if (err.statusCode === 413) return apiError('payload_too_large', err.message);
  if (err.statusCode === 415) return apiError('unsupported_media_type', err.message);
  return apiError(
    'internal_error',
    'Something went wrong inside the gateway. The request id in this body finds it in the log.'
  );
}

/** The answer for a path no route serves: also what a switched-off area answers, so it does not reveal itself. */
export function noRoute(req: FastifyRequest): ApiError {
  return apiError(
    'not_found',
    `No route ${req.method} ${req.url.split('?')[0]}. GET /v1/discovery lists what this gateway serves.`
  );
}

/** Longest path parameter the router matches (object keys travel as one, %-encoded, up to 1,024 bytes). */
export const MAX_PARAM_LENGTH = 4096;

function sendError(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  if (isClientGone(err, reply.raw)) {
    req.log.info({ route: req.routeOptions.url }, 'client closed the connection before the response');
    req.server.metrics?.clientDisconnects.inc({ method: req.method, route: req.routeOptions.url ?? 'unmatched' });
    // Nobody reads this answer; 499 (nginx's "client closed request") is what the access log shows.
    return reply.code(499).send();
  }
  return sendApiError(toApiError(err, req), err, req, reply);
}

function sendApiError(e: ApiError, err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  if (e.code === 'internal_error') req.log.error({ err }, 'unhandled error');
  else if (e.status >= 500) req.log.warn({ code: e.code, msg: e.message }, 'request failed');
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  return reply.code(e.status).type('application/json; charset=utf-8').send(errorBody(e, req.id));
}

/**
 * Fastify's `frameworkErrors` option: a URL the router cannot take apart (a bad %-escape, an
 * over-long parameter) is refused before any hook runs, so this answer sets x-request-id itself.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', req.id);
  return sendApiError(toApiError(err), err, req, reply);
}

export function installErrorHandling(app: FastifyInstance, allowedMethods?: (url: string) => string[]): void {
  app.setErrorHandler(sendError);
  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => {
    const allow = allowedMethods?.(req.url) ?? [];
    if (allow.length) {
      const e = apiError(
        'method_not_allowed',
        `${req.url.split('?')[0]} does not take ${req.method}; it takes ${allow.join(', ')}.`
      );
      return reply
        .code(405)
        .header('allow', allow.join(', '))
        .type('application/json; charset=utf-8')
        .send(errorBody(e, req.id));
    }
    const e = noRoute(req);
    return reply.code(404).type('application/json; charset=utf-8').send(errorBody(e, req.id));
  });
}
