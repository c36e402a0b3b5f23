import t from 'tap';
import { makeApp } from '../helpers/app.js';
import { TWILIO_SID } from '../fakes/twilio-fake.js';

// database-independent: the discovery and OpenAPI documents of the email, SMS and events areas; no row is read.

type Tap = Parameters<typeof makeApp>[0];

// Every operation of the three areas, as the routes declare them.
const OPERATIONS: Array<[string, string, string]> = [
  ['email.send', 'POST', '/v1/email/send'],
  ['email.get', 'GET', '/v1/email/{id}'],
  ['email.list', 'GET', '/v1/email'],
  ['email.raw', 'GET', '/v1/email/{id}/raw'],
  ['email.domains.verify', 'POST', '/v1/email/domains/verify'],
  ['email.domains.list', 'GET', '/v1/email/domains'],
  ['email.domains.delete', 'DELETE', '/v1/email/domains/{domain}'],
  ['email.suppress', 'POST', '/v1/email/suppress'],
  ['email.suppress.list', 'GET', '/v1/email/suppress'],
  ['email.suppress.delete', 'DELETE', '/v1/email/suppress/{email}'],
  ['email.templates.create', 'POST', '/v1/email/templates'],
  ['email.templates.list', 'GET', '/v1/email/templates'],
  ['email.templates.get', 'GET', '/v1/email/templates/{template_id}'],
  ['email.templates.update', 'PUT', '/v1/email/templates/{template_id}'],
  ['email.templates.delete', 'DELETE', '/v1/email/templates/{template_id}'],
  ['email.webhook', 'POST', '/v1/email/webhooks/{instance}'],
  ['sms.send', 'POST', '/v1/sms/send'],
  ['sms.get', 'GET', '/v1/sms/{id}'],
  ['sms.list', 'GET', '/v1/sms'],
  ['sms.captured', 'GET', '/v1/sms/{id}/captured'],
  ['sms.otp', 'POST', '/v1/sms/otp'],
  ['sms.verify', 'POST', '/v1/sms/verify'],
  ['sms.status', 'POST', '/v1/sms/status/{instance}'],
  ['sms.status.get', 'GET', '/v1/sms/status/{instance}'],
  ['events.types', 'GET', '/v1/events/types'],
  ['events.endpoints.create', 'POST', '/v1/events/endpoints'],
  ['events.endpoints.list', 'GET', '/v1/events/endpoints'],
  ['events.endpoints.get', 'GET', '/v1/events/endpoints/{id}'],
  ['events.endpoints.delete', 'DELETE', '/v1/events/endpoints/{id}'],
];
const METERED = ['email.send', 'sms.send', 'sms.otp'];

async function documents(t: Tap, overrides: Record<string, unknown> = {}) {
  const { app } = await makeApp(t, overrides);
  const items: any[] = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json().items;
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  return { app, byId: new Map(items.map((i) => [i.id, i])), doc };
}

t.test(
  'every email, SMS and events operation is in discovery and OpenAPI, the sends on their capability',
  async (t) => {
    const { byId, doc } = await documents(t);
    for (const [id, method, path] of OPERATIONS) {
      t.match(byId.get(id), { id, method, path }, `${id} in discovery`);
      t.equal(doc.paths[path]?.[method.toLowerCase()]?.operationId, id, `${method} ${path} in OpenAPI`);
    }
    const listed = [...byId.keys()].filter((id) => /^(email|sms|events)\./.test(id)).sort();
    t.same(listed, OPERATIONS.map(([id]) => id).sort(), 'and no operation of theirs is left out of this list');

    // On a laptop the capture vendors serve the sends, and a captured message costs nothing.
    t.match(byId.get('email.send'), { capability: 'email.send', available: true, vendors: ['capture'], billing: null });
    t.match(byId.get('sms.send'), { capability: 'sms.send', available: true, vendors: ['sms-capture'], billing: null });
    t.match(byId.get('sms.otp'), { capability: 'sms.send', vendors: ['sms-capture'], billing: null });
    t.equal(doc.paths['/v1/email/send'].post['x-svc-capability'], 'email.send');
    for (const [id] of OPERATIONS.filter(([id]) => !METERED.includes(id)))
      t.match(byId.get(id), { capability: null, billing: null }, `${id} calls no vendor and is free`);
  }
);

t.test('the sends show the price of the cheapest operator vendor, times the markup', async (t) => {
  const vendors = [
    { id: 'relay', use: 'smtp', config: { url: 'smtp://127.0.0.1:9', price_usd_per_message: 0.0004, pool: false } },
    {
      id: 'tw',
      use: 'twilio',
      config: { account_sid: TWILIO_SID, auth_token: 'x', from: '+15005550006', base_url: 'http://127.0.0.1:9' },
    },
  ];
  const { byId } = await documents(t, { vendors });
  t.match(byId.get('email.send'), { vendors: ['relay'], billing: { unit: 'message', price_usd: 0.0004 } });
  t.match(byId.get('sms.send'), { vendors: ['tw'], billing: { unit: 'segment', price_usd: 0.0083 } });
  t.same(byId.get('sms.otp').billing, { unit: 'segment', price_usd: 0.0083 }, 'a passcode is one segment');

  const cheaper = { ...vendors[1], id: 'tw2', config: { ...vendors[1].config, segment_price_usd: 0.005 } };
  const doubled = await documents(t, { vendors: [...vendors, cheaper], wallet: { markup: 2 } });
  t.same(doubled.byId.get('email.send').billing, { unit: 'message', price_usd: 0.0008 });
  t.same(doubled.byId.get('sms.send').billing, { unit: 'segment', price_usd: 0.01 }, 'the cheaper instance');
});

t.test('the vendor webhooks take no key and document the 401 of an unsigned body', async (t) => {
  const { app, doc } = await documents(t);
  for (const [id, path, method] of [
    ['email.webhook', '/v1/email/webhooks/{instance}', 'post'],
    ['sms.status', '/v1/sms/status/{instance}', 'post'],
    ['sms.status.get', '/v1/sms/status/{instance}', 'get'],
  ]) {
    const d = (await app.inject({ method: 'GET', url: `/v1/discovery/${id}` })).json();
    t.match(d, { auth: 'none', scope: null, idempotent: false }, id);
    t.same(
      d.errors.map((e: { code: string }) => e.code),
      ['validation_failed', 'unauthenticated', 'not_found'],
      `${id}: an unsigned body is 401, an unknown instance 404`
    );
    t.notMatch(d.example.curl, /Authorization/, `${id}: the example sends no key`);
    const op = doc.paths[path][method];
    t.same(op.security, [], `${id}: no security scheme in OpenAPI`);
    t.match(op.responses['401'].description, /unauthenticated/);
    t.ok(op.responses['404'], `${id}: 404 documented`);
  }
  // The route answers as documented: no key needed, an unknown instance is 404.
  const res = await app.inject({ method: 'POST', url: '/v1/email/webhooks/nope', payload: '{}' });
  t.equal(res.statusCode, 404);
  t.equal(res.json().error.code, 'not_found');
});
