// The anchor of the throughput bench: a bare Fastify process answering the same JSON the
// gateway answers on GET /v1/account/balance, with no auth, database or hooks.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/v1/account/balance', async () => ({ balance_usd: 5, currency: 'USD' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
const addr = app.server.address();
process.stdout.write(`listening on http://127.0.0.1:${addr.port}\n`);
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => app.close().then(() => process.exit(0)));
