import Fastify from 'fastify';
import pino from 'pino';
import { lazyChildLogger } from './dist/core/lazy-child-logger.js';
import { newId } from './dist/core/ids.js';
const v = process.env.V ?? '';
const opts = { logger: false };
if (v.includes('L')) { delete opts.logger; opts.loggerInstance = pino({ level: 'warn' }); opts.childLoggerFactory = lazyChildLogger; opts.disableRequestLogging = true; }
if (v.includes('I')) { opts.requestIdHeader = false; opts.genReqId = () => newId('req'); }
if (v.includes('F')) { opts.forceCloseConnections = 'idle'; opts.return503OnClosing = true; }
const app = Fastify(opts);
if (v.includes('H')) {
  app.addHook('onRequest', (req, reply, done) => { reply.header('x-request-id', req.id); done(); });
  app.addHook('onSend', (req, reply, p, done) => done(null, p));
  app.addHook('onResponse', (req, reply, done) => done());
}
app.get('/x', async () => ({ balance_usd: 5, currency: 'USD' }));
await app.listen({ host: '127.0.0.1', port: 8894 });
