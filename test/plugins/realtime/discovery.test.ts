import t from 'tap';
import { makeApp } from '../../helpers/app.js';

// database-independent: the realtime operations in discovery and OpenAPI; no row is read.

const OPERATIONS: Array<[string, string, string]> = [
  ['realtime.token', 'POST', '/v1/realtime/token'],
  ['realtime.channels.create', 'POST', '/v1/realtime/channels'],
  ['realtime.channels.list', 'GET', '/v1/realtime/channels'],
  ['realtime.channels.delete', 'DELETE', '/v1/realtime/channels/{channel}'],
  ['realtime.publish', 'POST', '/v1/realtime/publish'],
  ['realtime.presence', 'GET', '/v1/realtime/channels/{channel}/presence'],
  ['realtime.pusher', 'POST', '/v1/realtime/pusher'],
  ['realtime.pusher.events', 'POST', '/apps/{app_id}/events'],
  ['realtime.pusher.batch', 'POST', '/apps/{app_id}/batch_events'],
];

t.test('every realtime operation is in discovery and OpenAPI; publish is priced per message', async (t) => {
  const { app } = await makeApp(t, { plugins: { realtime: { price_per_million_messages_usd: 2 } } });
  const items: any[] = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json().items;
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  const byId = new Map(items.map((i) => [i.id, i]));
  for (const [id, method, path] of OPERATIONS) {
    t.match(byId.get(id), { id, method, path }, `${id} in discovery`);
    t.equal(doc.paths[path]?.[method.toLowerCase()]?.operationId, id, `${method} ${path} in OpenAPI`);
  }
  const listed = [...byId.keys()].filter((id) => id.startsWith('realtime.')).sort();
  t.same(listed, OPERATIONS.map(([id]) => id).sort(), 'and none left out of this list');
  t.same(byId.get('realtime.publish').billing, { unit: 'message', price_usd: 0.000002 });
  const one = (await app.inject({ method: 'GET', url: '/v1/discovery/realtime.publish' })).json();
  t.ok(
    one.errors.some((e: any) => e.code === 'payload_too_large'),
    'its errors'
  );
});
