import type { ServerResponse } from 'node:http';

/**
 * The reason a request's signal aborts when its client hangs up. A client that goes away is a
 * normal event (a closed tab, a timeout on its side), not a failure of the gateway: the error
 * handler logs it at info and counts it, as nginx's 499 does.
 */
export class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'ClientGone';
  }
}

/** Aborts (with ClientGone) when the client closes the connection before the response has been sent. */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  if (res.destroyed && !res.writableFinished) gone.abort(new ClientGone());
  else
    res.once('close', () => {
      if (!res.writableFinished) gone.abort(new ClientGone());
    });
  return gone.signal;
}

/**
 * Whether a request failed because its client left: the error is ours, or the connection closed
 * before the answer (an adapter may surface the abort as an error of its own).
 */
export function isClientGone(err: unknown, res: ServerResponse): boolean {
  return err instanceof ClientGone || (res.destroyed && !res.writableFinished);
}
