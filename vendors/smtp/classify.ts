import type { FailureKind } from '../../core/kit/vendor.js';

interface SmtpError {
  code?: string;
  responseCode?: number;
  command?: string;
}

/** Commands answered before any of the message's content is written. */
const BEFORE_CONTENT = new Set(['CONN', 'EHLO', 'HELO', 'LHLO', 'STARTTLS', 'MAIL FROM', 'RCPT TO']);

/**
 * An SMTP failure as the router's kinds. The connection goes through the egress proxy, so a
 * server that cannot be reached is the proxy's refusal (EPROXY): nothing sent. Before the server
 * took the content (TLS, MAIL FROM, RCPT TO, the DATA command itself) a 4xx is `not_sent`, safe
 * to retry. A broken or silent connection once the session is open is ambiguous (nodemailer
 * names every socket error CONN, mid-DATA too), and after the content went out the server may
 * have queued it whatever it answered: neither is ever `not_sent`, so nothing is sent twice.
 */
export function classifySmtp(err: unknown): FailureKind | undefined {
  const e = (err ?? {}) as SmtpError;
  const status = e.responseCode ?? 0;
  switch (e.code) {
    case 'EPROXY':
    case 'EDNS':
    case 'ETLS':
    case 'EREQUIRETLS':
      return 'not_sent';
    case 'EAUTH':
      return 'auth';
    case 'EENVELOPE':
      return status >= 400 && status < 500 ? 'not_sent' : 'client_error';
    case 'EMESSAGE':
      return status >= 500 ? 'client_error' : 'unavailable';
    case 'ECONNECTION':
    case 'EPROTOCOL':
      // A server that answered 421 to the greeting or EHLO turned the session down before any content.
      return status >= 400 && status < 500 && BEFORE_CONTENT.has(e.command ?? '') ? 'not_sent' : 'unavailable';
    case 'ESOCKET':
    case 'ETIMEDOUT':
      return 'unavailable';
    default:
      return undefined;
  }
}
