import t from 'tap';
import { makeApp } from '../helpers/app.js';

// database-independent: the discovery and OpenAPI documents of the captcha area; no row is read.

const OPERATIONS: Array<[string, string, string]> = [
  ['captcha.verify', 'POST', '/v1/captcha/verify'],
  ['captcha.widgets', 'POST', '/v1/captcha/widgets'],
  ['captcha.site_keys.create', 'POST', '/v1/captcha/site-keys'],
  ['captcha.site_keys.list', 'GET', '/v1/captcha/site-keys'],
  ['captcha.site_keys.get', 'GET', '/v1/captcha/site-keys/{id}'],
  ['captcha.site_keys.update', 'PATCH', '/v1/captcha/site-keys/{id}'],
  ['captcha.site_keys.delete', 'DELETE', '/v1/captcha/site-keys/{id}'],
  ['captcha.challenge', 'GET', '/v1/captcha/sites/{site_key_id}/challenge'],
];

t.test('every captcha operation is in discovery and OpenAPI; verify on its capability, priced', async (t) => {
  const { app } = await makeApp(t, {
    vendors: [{ id: 'recaptcha', use: 'recaptcha', config: { secret_key: 'x', base_url: 'http://127.0.0.1:9' } }],
  });
  const items: any[] = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json().items;
  const byId = new Map(items.map((i) => [i.id, i]));
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  for (const [id, method, path] of OPERATIONS) {
    t.match(byId.get(id), { id, method, path }, `${id} in discovery`);
    t.equal(doc.paths[path]?.[method.toLowerCase()]?.operationId, id, `${method} ${path} in OpenAPI`);
  }
  const listed = [...byId.keys()].filter((id) => id.startsWith('captcha.')).sort();
  t.same(listed, OPERATIONS.map(([id]) => id).sort(), 'and none left out of this list');
  t.match(byId.get('captcha.verify'), {
    capability: 'captcha.verify',
    available: true,
    vendors: ['recaptcha', 'service'],
    billing: { unit: 'verification', price_usd: 0.00001 },
  });
  const challenge = (await app.inject({ method: 'GET', url: '/v1/discovery/captcha.challenge' })).json();
  t.match(challenge, { auth: 'none', scope: null });
  t.notMatch(challenge.example.curl, /Authorization/, 'a browser calls it with no key');
  t.same(doc.paths['/v1/captcha/sites/{site_key_id}/challenge'].get.security, []);
  t.ok(challenge.errors.some((e: { code: string }) => e.code === 'origin_not_allowed'));
});
