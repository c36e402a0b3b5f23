import t from 'tap';
import { connect } from 'node:net';
import { makeApp, activate } from '../../helpers/app.js';

// database-independent: the router's own refusals, before any hook.

// URLs the router itself refuses (before any hook) answer in the conventions' shape too.

/** One raw HTTP/1.1 request on its own socket, so nothing normalises the URL on the way. */
function rawRequest(
  port: number,
  method: string,
  path: string
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let data = '';
    sock.on('data', (c) => (data += c.toString('latin1')));
    sock.on('error', reject);
    sock.on('end', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body: rest.join('\r\n\r\n') });
    });
    sock.write(`${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
  });
}

t.test('a bad %-escape and an over-long path parameter get the error shape and x-request-id', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const long = `/v1/account/keys/${'k'.repeat(5000)}`;
  const cases = [
    { url: '/v1/account/keys/%zz', status: 400, code: 'invalid_request' },
    { url: long, status: 414, code: 'uri_too_long' },
  ];
  for (const c of cases) {
    const r = await app.inject({ method: 'DELETE', url: c.url, headers: { ...a.auth, 'x-request-id': 'trace-odd' } });
    t.equal(r.statusCode, c.status, c.code);
    t.equal(r.headers['x-request-id'], 'trace-odd');
    t.match(r.headers['content-type'], /^application\/json/);
    t.match(r.json(), { error: { code: c.code, status: c.status, request_id: 'trace-odd', details: {} } });
  }

  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  for (const c of cases) {
    const r = await rawRequest(port, 'DELETE', c.url);
    t.equal(r.status, c.status, `raw ${c.code}`);
    const id = /^x-request-id: (req_\S+)$/im.exec(r.headers)?.[1];
    t.ok(id, 'a generated x-request-id');
    const body = JSON.parse(r.body);
    t.equal(body.error.code, c.code);
    t.equal(body.error.request_id, id);
  }
});
