import t from 'tap';
import { createServer } from 'node:http';
import { Value } from '@sinclair/typebox/value';
import { CoreConfigSchema } from '../../../config/schema.js';
import { Egress } from '../../../core/egress/egress.js';
import { configuredHosts, VendorNetwork } from '../../../core/egress/vendor-agent.js';

// database-independent: a vendor's fetch under the egress rules, against servers on loopback.

async function server(t: any, handler: (url: string) => { status: number; headers?: Record<string, string> }) {
  let hits = 0;
  const s = createServer((req, res) => {
    hits++;
    const a = handler(req.url ?? '/');
    res.writeHead(a.status, a.headers ?? {}).end('ok');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => s.close(r)));
  return { port: (s.address() as any).port as number, hits: () => hits };
}

function network(t: any) {
  // The server's rules: loopback and private refused.
  const egress = new Egress(
    Value.Default(CoreConfigSchema.properties.egress, { allow_private: false, allow_loopback: false }) as any
  );
  const net = new VendorNetwork(egress);
  t.teardown(async () => {
    await net.close();
    await egress.close();
  });
  return net;
}

t.test('the hosts of every URL in a vendor config', async (t) => {
  const hosts = configuredHosts({
    base_url: 'http://127.0.0.1:11434/v1',
    nested: { list: ['https://API.example.com/x', 'not a url', 7] },
    v6: 'http://[::1]:80/',
  });
  t.same([...hosts].sort(), ['127.0.0.1', '::1', 'api.example.com']);
});

t.test('a host the operator named is reached on loopback; any other loopback host is refused', async (t) => {
  const other = await server(t, () => ({ status: 200 }));
  const named = await server(t, (url) =>
    url === '/away' ? { status: 302, headers: { location: `http://localhost:${other.port}/x` } } : { status: 200 }
  );
  const { fetch } = network(t).for({ base_url: `http://127.0.0.1:${named.port}` });
  const ok = await fetch(`http://127.0.0.1:${named.port}/models`);
  t.equal(ok.status, 200, 'the configured base_url');
  await ok.text();
  await t.rejects(fetch(`http://localhost:${other.port}/x`), 'a host not named, on loopback');
  await t.rejects(fetch(`http://127.0.0.1:${named.port}/away`), 'a redirect to a host not named');
  t.equal(other.hits(), 0, 'the other server never heard of it');
});

t.test('the metadata service is refused even when a vendor config names it', async (t) => {
  const { fetch } = network(t).for({ base_url: 'http://169.254.169.254/latest' });
  const e = await fetch('http://169.254.169.254/latest/meta-data').catch((err) => err);
  t.ok(e instanceof Error);
  t.match(String(e.cause?.message ?? e.message), /metadata/, 'refused as the metadata service, before any connection');
  const named = network(t).for({ base_url: 'http://metadata.google.internal/' });
  await t.rejects(named.fetch('http://metadata.google.internal/computeMetadata/v1/'), 'by name too');
});
