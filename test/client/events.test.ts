import t from 'tap';
import { SvcClient } from '../../client/index.js';
import { FAST, receiver, verify } from '../plugins/scheduling/receiver.js';
import { clientApp, collect, rejects, settled, walked } from './client-app.js';

// client.events against a listening gateway: the event types, endpoints created, paged, read and
// deleted, errors as SvcError; and an email sent through the client arriving, signed, at the
// endpoint registered through it.

t.test('types, and endpoints: create (idempotent), get, page, iterate, delete', async (t) => {
  const { c, url } = await clientApp(t);
  const types = (await c.events.types()).items.map((x) => x.type);
  for (const type of ['email.sent', 'email.bounced', 'sms.sent', 'sms.failed']) t.ok(types.includes(type), type);

  const body = { url: 'https://example.com/hooks/one', event_types: ['email.sent'], description: 'one' };
  const one = await c.events.endpoints.create(body, { idempotencyKey: 'ep-1' });
  t.match(one, { endpoint_id: /^ep_/, url: body.url, event_types: ['email.sent'], secret: /^whsec_/ });
  t.same(await c.events.endpoints.create(body, { idempotencyKey: 'ep-1' }), one, 'the retry answers the same');
  await rejects(
    t,
    c.events.endpoints.create({ url: 'https://example.com/hooks/other' }, { idempotencyKey: 'ep-1' }),
    { code: 'idempotency_key_reused', status: 409 },
    'the same key with another body'
  );
  const ids = [one.endpoint_id];
  for (const n of [2, 3])
    ids.push((await c.events.endpoints.create({ url: `https://example.com/hooks/${n}` })).endpoint_id);

  const got = await c.events.endpoints.get(one.endpoint_id);
  t.same(got, {
    endpoint_id: one.endpoint_id,
    url: body.url,
    event_types: ['email.sent'],
    description: 'one',
    created_at: one.created_at,
  });
  const page = await c.events.endpoints.list({ limit: 2 });
  t.equal(page.items.length, 2);
  t.type(page.next_cursor, 'string');
  walked(t, await collect(c.events.endpoints.iterate({ limit: 2 })), (e) => e.endpoint_id, ids, 'endpoints');
  t.notOk(
    page.items.some((e) => 'secret' in e),
    'lists carry no secret'
  );

  const other = new SvcClient({ baseUrl: url });
  await other.activate();
  await rejects(
    t,
    other.events.endpoints.get(one.endpoint_id),
    { code: 'not_found', status: 404, param: 'id' },
    'theirs'
  );
  t.same(await c.events.endpoints.delete(one.endpoint_id), { ok: true });
  await rejects(t, c.events.endpoints.get(one.endpoint_id), { code: 'not_found', status: 404 }, 'deleted');
  await rejects(t, c.events.endpoints.delete(one.endpoint_id), { code: 'not_found', status: 404 }, 'deleted once');
  await rejects(
    t,
    c.events.endpoints.create({ url: 'https://example.com/x', event_types: ['email.nope'] }),
    { code: 'validation_failed', status: 400, param: 'event_types[0]' },
    'an event type the gateway does not emit'
  );
});

t.test('an email sent through the client reaches the endpoint registered through it, signed', async (t) => {
  const { c } = await clientApp(t, FAST);
  const rx = await receiver(t);
  const ep = await c.events.endpoints.create({ url: rx.url, event_types: ['email.sent'] });
  const m = await c.email.send({ to: 'ann@example.org', subject: 'Hello', text: 'Hi' });
  await settled('the email', () => c.email.get(m.id));
  await rx.waitFor(1);
  const event = verify(ep.secret, rx.hits[0]) as { type: string; data: { id: string; state: string } };
  t.equal(event.type, 'email.sent');
  t.match(event.data, { id: m.id, state: 'sent' });
});
