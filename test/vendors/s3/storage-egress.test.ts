import t from 'tap';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { Value } from '@sinclair/typebox/value';
import s3 from '../../../vendors/s3/index.js';
import minio from '../../../vendors/minio/index.js';
import { classifyGeneric } from '../../../core/router/failure.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { s3rver } from '../../helpers/s3rver.js';

// database-independent: the storage adapters' connections are held to the egress rules.

const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });
const ref = { account: 'acc_1', bucket: 'media', key: 'a.txt' };

/** A TCP listener on loopback that counts the connections it is given (and answers none). */
async function listener(t: Tap.Test) {
  let connections = 0;
  const s = createServer((sock) => {
    connections++;
    sock.destroy();
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => s.close(r)));
  return { endpoint: `http://127.0.0.1:${(s.address() as any).port}`, connections: () => connections };
}

const adapters = {
  s3: (endpoint: string) =>
    Value.Default(s3.configSchema, {
      endpoint,
      bucket: 'backing',
      force_path_style: true,
      access_key_id: 'S3RVER',
      secret_access_key: 'S3RVER',
    }),
  minio: (endpoint: string) =>
    Value.Default(minio.configSchema, {
      endpoint,
      bucket: 'backing',
      access_key_id: 'S3RVER',
      secret_access_key: 'S3RVER',
    }),
};

async function create(t: Tap.Test, name: keyof typeof adapters, endpoint: string, egress: Record<string, unknown>) {
  const vendor = name === 's3' ? s3 : minio;
  const config = adapters[name](endpoint);
  const inst = await vendor.create(config as any, vendorContext(name, t, egress, config));
  t.teardown(() => inst.close?.());
  return { inst, caps: inst.capabilities as Record<string, any> };
}

for (const name of ['s3', 'minio'] as const) {
  t.test(
    `${name}: the configured endpoint is the operator's choice, reached where egress refuses loopback`,
    async (t) => {
      const endpoint = await s3rver(t);
      const { caps } = await create(t, name, endpoint, { allow_loopback: false });
      const data = Buffer.from('hello under the egress rules');
      await caps['storage.object.put'].invoke(
        { ...ref, body: Readable.from([data]), data, content_type: 'text/plain', content_length: data.length },
        opts()
      );
      const head = await caps['storage.object.head'].invoke(ref, opts());
      t.equal(head?.size, data.length);
    }
  );

  t.test(`${name}: an endpoint at the metadata service is never connected to`, async (t) => {
    const { inst, caps } = await create(t, name, 'http://169.254.169.254:80', { allow_private: true });
    const e = await caps['storage.object.head'].invoke(ref, opts()).catch((err: unknown) => err);
    t.ok(e instanceof Error, 'the call fails');
    t.match(String((e as Error).message), /egress refused 169\.254\.169\.254: the metadata service/);
    t.equal(inst.classify?.(e) ?? classifyGeneric(e), 'not_sent', 'nothing sent: safe to fail over');
  });

  t.test(`${name}: a host other than the configured one is held to the egress rules`, async (t) => {
    const target = await listener(t);
    const ctx = vendorContext(name, t, { allow_loopback: false }, adapters[name]('http://storage.example.test:9000'));
    const agents = ctx.nodeAgents!();
    const e = await new Promise<Error>((resolve) => {
      const req = httpRequest(`${target.endpoint}/`, { agent: agents.httpAgent }, () => resolve(new Error('answered')));
      req.once('error', resolve);
      req.end();
    });
    t.match(e.message, /egress refused 127\.0\.0\.1/);
    t.equal(target.connections(), 0, 'the host never saw a connection');
  });
}
