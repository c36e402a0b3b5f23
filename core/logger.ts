import pino, { type Logger } from 'pino';
import { loggableUrl } from './http/log-url.js';

// Field names that carry a secret wherever they appear: keys, vendor and BYOK credentials,
// generated keys, tokens. Censored at the top of a log object and up to three levels down
// (`{ vendor: { config: { api_key } } }`), since a log call may put them at any depth.
const SECRET_FIELDS = [
  'api_key',
  'secret',
  'password',
  'token',
  'credentials',
  'primary_api_key',
  'master_key',
  'admin_key',
  'authorization',
  'x-api-key',
  'cookie',
];
const DEPTHS = ['', '*.', '*.*.', '*.*.*.'];

// Request headers (`req.headers.authorization`) are two levels down, so covered too.
export const REDACT_PATHS = DEPTHS.flatMap((d) =>
  SECRET_FIELDS.map((f) => (/^[a-z_]+$/.test(f) ? `${d}${f}` : `${d}["${f}"]`))
);

/**
 * `req` in a log line: a Fastify request as Fastify's own serializer shows it, with presigned
 * URLs' signatures left out (http/log-url.ts); any other object with a `url` likewise.
 */
function req(r: any): unknown {
  if (!r || typeof r.url !== 'string') return r;
  if (!r.raw) return { ...r, url: loggableUrl(r.url) };
  return {
    method: r.method,
    url: loggableUrl(r.url),
    host: r.host,
    remoteAddress: r.ip,
    remotePort: r.socket?.remotePort,
  };
}

/**
 * `log.warn({ msg: e.message }, 'request failed')` made pino write "msg" twice in one line (the
 * object's, then the message), which JSON parsers resolve by keeping the last: the error text
 * was lost. With a message given, an object's own `msg` is kept as `detail`.
 */
function logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void): void {
  const [obj, message] = args;
  if (typeof message === 'string' && obj && typeof obj === 'object' && !(obj instanceof Error) && 'msg' in obj) {
    const { msg, ...rest } = obj as Record<string, unknown>;
    args[0] = { ...rest, detail: msg };
  }
  method.apply(this, args);
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { svc: 'svc-gateway' },
      serializers: { req },
      hooks: { logMethod },
    },
    destination
  );
}
