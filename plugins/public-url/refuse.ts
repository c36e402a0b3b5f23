import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { apiError, isApiError, type ErrorCode } from '../../core/kit/area.js';

function body(code: ErrorCode, message: string): { status: number; json: string } {
  const e = apiError(code, message);
  return { status: e.status, json: JSON.stringify({ error: { code, message, status: e.status } }) };
}

/** The conventions' error body on a raw socket, for an upgrade the gateway refuses. */
export function refuseSocket(socket: Duplex, code: ErrorCode, message: string): void {
  const { status, json } = body(code, message);
  if (socket.destroyed) return;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n`
      + `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`
  );
}

/** The same on a plain response (a request for a tunnel the gateway cannot serve). */
export function refuseResponse(res: ServerResponse, code: ErrorCode, message: string): void {
  const { status, json } = body(code, message);
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/** An ApiError thrown by a check, as a refusal; anything else is the gateway's own fault. */
export function asRefusal(e: unknown): { code: ErrorCode; message: string } {
  if (isApiError(e)) return { code: e.code, message: e.message };
  return { code: 'internal_error', message: 'The tunnel could not be opened.' };
}
