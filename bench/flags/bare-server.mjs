// The anchor of the flags bench: a bare Fastify process answering a constant evaluation on the
// gateway's flag path, with no auth, no lookup and no hashing.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const answer = { key: 'checkout', enabled: true, value: true, variant: 'on', reason: 'SPLIT' };
app.get('/v1/observability/flags/:key', async () => answer);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => app.close().then(() => process.exit(0)));
