import pino, { type Logger } from 'pino';

// Paths that may carry a secret anywhere in a log line: keys in headers, vendor credentials,
// BYOK credentials, generated keys. Values are replaced, never logged.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.api_key', '*.secret', '*.password', '*.token', '*.credentials', '*.primary_api_key', '*.master_key', '*.admin_key',
  '*.*.api_key', '*.*.secret', '*.*.password', '*.*.credentials',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { svc: 'svc-gateway' } }, destination);
}
