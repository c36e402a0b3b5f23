import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

// `Expect: 100-continue` asks whether to send the body. Without a 'checkContinue' listener
// Node answers 100 at once, before any hook has run, so a client sent its body (gigabytes, for
// an upload) to a request authentication then refused. Here the 100 waits until the request is
// authenticated: for API routes when the body is about to be parsed (after the onRequest auth
// hook); routes that authenticate in their handler (the S3 endpoint) set
// `config.continueInHandler` and call sendContinue once they have.

const waiting = new WeakSet<IncomingMessage>();

/** Tell a client waiting on `Expect: 100-continue` to send its body; nothing for any other request. */
export function sendContinue(req: IncomingMessage, res: ServerResponse): void {
  if (waiting.delete(req)) res.writeContinue();
}

export function installExpectContinue(app: FastifyInstance): void {
  app.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    waiting.add(req);
    app.server.emit('request', req, res);
  });
  app.addHook('preParsing', (req, reply, payload, done) => {
    if (!req.routeOptions.config?.continueInHandler) sendContinue(req.raw, reply.raw);
    done(null, payload);
  });
}
