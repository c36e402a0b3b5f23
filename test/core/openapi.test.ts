import t from 'tap';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.js';

// database-independent: the OpenAPI document and /docs; no row is read.

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * The app's routes as Fastify itself prints them (a tree of path segments with their
 * methods), independent of the registry the document is generated from.
 */
function routesOf(app: FastifyInstance): Array<{ method: string; url: string }> {
  const out: Array<{ method: string; url: string }> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?) \(([A-Z, ]+)\)$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    const url = `${stack[depth - 1] ?? ''}${m[2]}`;
    stack.push(url);
    for (const method of m[3].split(', ')) if (method !== 'HEAD') out.push({ method, url });
  }
  return out;
}

const asOpenapi = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

t.test('GET /v1/openapi.json is a valid OpenAPI 3.1 document of the app', async (t) => {
  const { app, config } = await makeApp(t, { server: { public_url: 'https://gw.example.com' } });
  const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  t.equal(res.statusCode, 200, 'no key needed');
  t.match(res.headers['content-type'], /^application\/json/);
  const doc = res.json();

  const validator = new Validator();
  const verdict = await validator.validate(structuredClone(doc));
  t.same(verdict.errors ?? [], [], 'no schema errors');
  t.equal(verdict.valid, true, 'valid per the OpenAPI 3.1 schema');
  t.equal(validator.version, '3.1');

  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, pkg.version, 'the gateway version');
  t.same(doc.servers, [{ url: config.server.public_url }]);
  t.equal(config.server.public_url, 'https://gw.example.com');
  t.same(
    Object.keys(doc.components.securitySchemes).sort(),
    ['apiKeyHeader', 'bearerAuth'],
    'no admin key: no admin scheme'
  );
  t.equal(doc.components.securitySchemes.bearerAuth.scheme, 'bearer');
  t.same(doc.components.securitySchemes.apiKeyHeader, {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: doc.components.securitySchemes.apiKeyHeader.description,
  });
  t.ok(doc.components.schemas.Error.properties.error.properties.code.enum.includes('insufficient_balance'));
  const tags = doc.tags.map((x: { name: string }) => x.name);
  t.equal(tags[0], 'system');
  t.ok(tags.includes('account'), 'a tag per area');
  t.equal(new Set(tags).size, tags.length, 'each tag once');

  // Every /v1 route the app serves is in the document, under its method.
  const v1 = routesOf(app).filter((r) => r.url.startsWith('/v1/'));
  t.ok(v1.length >= 10, `found ${v1.length} /v1 routes`);
  for (const r of v1) t.ok(doc.paths[asOpenapi(r.url)]?.[r.method.toLowerCase()], `${r.method} ${r.url} is documented`);
  // Hidden routes stay out.
  for (const hidden of ['/healthz', '/readyz', '/metrics', '/docs', '/docs/json'])
    t.notOk(doc.paths[hidden], `${hidden} is hidden`);

  const ids = new Set<string>();
  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops).filter(([m]) => METHODS.includes(m))) {
      const where = `${method.toUpperCase()} ${path}`;
      t.match(
        op.operationId,
        /^[a-z]+(\.[a-z_]+)+$/,
        `${where} declares config.operation (or schema.hide), its operationId`
      );
      t.notOk(ids.has(op.operationId), 'operationIds are unique');
      ids.add(op.operationId);
      t.ok(op.tags?.length, `${where} is tagged`);
      const errors = Object.entries<any>(op.responses).filter(([s]) => Number(s) >= 400);
      t.ok(
        errors.some(([s]) => s === '400'),
        `${where} documents validation errors`
      );
      for (const [status, resp] of errors)
        t.equal(
          resp.content['application/json'].schema.$ref,
          '#/components/schemas/Error',
          `${where} ${status} refers to the shared error body`
        );
      t.notOk(JSON.stringify(op).includes('x-svc-errors'), 'no internal markers leak');
    }
  }

  const keys = doc.paths['/v1/account/keys'];
  t.equal(keys.post.operationId, 'account.keys.create');
  t.same(keys.post.security, [{ bearerAuth: [] }, { apiKeyHeader: [] }], 'key routes take a bearer key or x-api-key');
  t.same(Object.keys(keys.post.responses).sort(), ['200', '400', '401', '403', '409', '413', '415', '429']);
  t.match(keys.post.responses['409'].description, /idempotency_key_reused.*\n\n.*idempotency_in_progress/s);
  t.equal(keys.post.requestBody.content['application/json'].schema.required[0], 'label');
  t.same(doc.paths['/v1/activate'].post.security, [], 'activation needs no key');
  t.same(doc.paths['/v1/version'].get.security, []);
  t.notOk(doc.paths['/v1/version'].get.responses['401'], 'no 401 where no key is asked for');
  t.ok(
    doc.paths['/v1/account/keys/{key_id}'].delete.parameters.some(
      (p: any) => p.in === 'path' && p.name === 'key_id' && p.required
    )
  );
  t.ok(doc.paths['/v1/account/keys/{key_id}'].delete.responses['404'], 'an unknown id is a documented 404');
  t.ok(doc.paths['/v1/account/keys'].get.parameters.some((p: any) => p.in === 'query' && p.name === 'limit'));

  const again = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  t.same(again.json(), doc, 'the same document every time');
});

t.test('/docs serves the UI and its assets from the gateway, no CDN', async (t) => {
  const { app } = await makeApp(t);
  const page = await app.inject({ method: 'GET', url: '/docs' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.notMatch(page.body, /https?:\/\//, 'every asset is local');
  const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
  const styles = [...page.body.matchAll(/<link rel="stylesheet" type="text\/css" href="([^"]+)"/g)].map((m) => m[1]);
  t.ok(scripts.length >= 3, 'the page loads scripts');
  t.ok(scripts.some((s) => s.endsWith('swagger-ui-bundle.js')));
  for (const src of scripts) {
    const js = await app.inject({ method: 'GET', url: src });
    t.equal(js.statusCode, 200, src);
    t.match(js.headers['content-type'], /javascript/, src);
    t.ok(js.body.length > 0, `${src} is not empty`);
  }
  for (const href of styles) t.equal((await app.inject({ method: 'GET', url: href })).statusCode, 200, href);
  const json = await app.inject({ method: 'GET', url: '/docs/json' });
  t.same(
    json.json(),
    (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json(),
    'the UI reads the same document'
  );
});
