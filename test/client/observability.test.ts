import t from 'tap';
import { clientApp, rejects } from './client-app.js';

// client.observability against a listening gateway: an error grouped, its issue resolved,
// metrics written and queried, a flag created, evaluated and updated with its version.

t.test('errors, metrics and flags through the client', async (t) => {
  const { c } = await clientApp(t);
  const r = await c.observability.reportError({ message: 'Order 12 failed', code: 'order_failed' });
  await c.observability.reportError({ message: 'Order 13 failed', code: 'order_failed' });
  t.match(await c.observability.issue(r.issue_id), { count: 2, status: 'unresolved' });
  t.equal((await c.observability.setIssueStatus(r.issue_id, 'resolved')).status, 'resolved');
  t.equal((await c.observability.issueEvents(r.issue_id)).items.length, 2);
  t.match(await c.observability.sentryDsn(), { dsn: /^http:\/\/[0-9a-f]{32}@/ });

  const at = '2026-11-02T10:00:00.000Z';
  t.same(
    await c.observability.metrics([
      { name: 'm', value: 2, timestamp: at },
      { name: 'm', value: 4, timestamp: at },
    ]),
    { ok: true }
  );
  const q = await c.observability.queryMetrics({ name: 'm', from: at, to: '2026-11-02T10:01:00.000Z', agg: 'sum' });
  t.same(q.series, [{ tags: {}, points: [{ t: at, value: 6 }] }]);
  t.same(await c.observability.event({ event: 'deploy' }), { ok: true });

  const f = await c.observability.flags.create({ key: 'dark-mode', type: 'boolean', fallthrough: { variant: 'off' } });
  t.match(await c.observability.flags.evaluate('dark-mode', { distinct_id: 'u1' }), {
    enabled: false,
    reason: 'STATIC',
  });
  await c.observability.flags.update('dark-mode', { type: 'boolean', version: f.version });
  t.match(await c.observability.flags.evaluate('dark-mode'), { enabled: true });
  await rejects(
    t,
    c.observability.flags.update('dark-mode', { type: 'boolean', version: 1 }),
    { code: 'conflict', status: 409 },
    'a stale version'
  );
  t.equal((await c.observability.flags.audit('dark-mode')).items.length, 2);
  t.same(await c.observability.flags.delete('dark-mode', 2), { ok: true });
});
