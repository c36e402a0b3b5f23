import t from 'tap';
import { obsApp, post, get, patch, rowCount } from './obs-app.js';
import { group, maskMessage, parseStack, stackType } from '../../../plugins/observability/fingerprint.js';

// Errors grouped into issues: by exception type and the innermost frames of the stack, or by
// the message with its numbers and ids masked; counts, first/last seen, and the statuses.

function stackAt(line: number, type = 'TypeError', msg = 'x is undefined') {
  return [
    `${type}: ${msg}`,
    `    at handler (/srv/app/routes.js:${line}:13)`,
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    '    at async run (/srv/app/server.js:40:3)',
  ].join('\n');
}

t.test('fingerprint', async (t) => {
  const frames = parseStack(stackAt(10));
  t.same(frames[0], { fn: 'handler', file: '/srv/app/routes.js', line: 10 });
  t.equal(stackType(stackAt(10)), 'TypeError');
  t.same(parseStack('fn@https://cdn.example.com/app.js?v=3:4:2\n@https://x/app.js:5:1'), [
    { fn: 'fn', file: 'https://cdn.example.com/app.js?v=3', line: 4 },
    { fn: undefined, file: 'https://x/app.js', line: 5 },
  ]);
  t.equal(
    maskMessage('User acct_0mj3k2a9Z81 not found after 3 tries (id 5f2b1c9e-0000-4000-8000-123456789abc)'),
    'User <id> not found after <n> tries (id <uuid>)'
  );
  const g = (stack: string, message = 'm') =>
    group({ message, type: stackType(stack), frames: parseStack(stack), topFrames: 5 }).fingerprint;
  t.equal(g(stackAt(10), 'a'), g(stackAt(10), 'b'), 'same type and frames: one issue whatever the message');
  t.not(g(stackAt(10)), g(stackAt(11)), 'another line: another issue');
  t.not(g(stackAt(10)), g(stackAt(10, 'RangeError')), 'another type: another issue');
  const cdn = (v: string) => `E: m\n    at f (https://cdn${v}.example.com/app.js?v=${v}:4:2)`;
  t.equal(g(cdn('1')), g(cdn('2')), 'host and query of a file do not split an issue');
  const byMsg = (m: string) => group({ message: m, type: null, frames: [], topFrames: 5 }).fingerprint;
  t.equal(byMsg('Order 1234 failed'), byMsg('Order 98 failed'));
  t.not(byMsg('Order 1234 failed'), byMsg('Order 1234 refused'));
});

t.test('errors and issues', async (t) => {
  const { app, a, b } = await obsApp(t);
  const send = (body: unknown, who = a) => post(app, who, '/v1/observability/errors', body);

  const first = await send({ message: 'x is undefined', stack: stackAt(10), tags: { release: '1.0' } });
  t.equal(first.statusCode, 200);
  t.match(first.json(), { ok: true, error_id: /^err_/, issue_id: /^iss_/ });
  const again = (await send({ message: 'x is undefined (again)', stack: stackAt(10) })).json();
  t.equal(again.issue_id, first.json().issue_id, 'same fingerprint, same issue');
  const other = (await send({ message: 'x is undefined', stack: stackAt(12) })).json();
  t.not(other.issue_id, again.issue_id);
  const m1 = (await send({ message: 'Payment 991 declined', code: 'card_declined' })).json();
  const m2 = (await send({ message: 'Payment 17 declined', code: 'card_declined' })).json();
  t.equal(m1.issue_id, m2.issue_id, 'messages with numbers masked group');

  const issue = (await get(app, a, `/v1/observability/issues/${again.issue_id}`)).json();
  t.match(issue, { title: 'TypeError: x is undefined', type: 'TypeError', status: 'unresolved', count: 2 });
  t.equal(issue.culprit, 'handler (/srv/app/routes.js:10)');
  t.ok(issue.first_seen <= issue.last_seen);
  const msgIssue = (await get(app, a, `/v1/observability/issues/${m1.issue_id}`)).json();
  t.match(msgIssue, { type: 'card_declined', count: 2, title: 'card_declined: Payment 991 declined' });

  const list = (await get(app, a, '/v1/observability/issues?limit=2')).json();
  t.equal(list.items.length, 2);
  t.equal(list.items[0].issue_id, m1.issue_id, 'newest first');
  const rest = (await get(app, a, `/v1/observability/issues?limit=2&cursor=${list.next_cursor}`)).json();
  t.equal(rest.items.length, 1);
  t.equal(rest.next_cursor, null);

  const events = (await get(app, a, `/v1/observability/issues/${again.issue_id}/events`)).json();
  t.equal(events.items.length, 2);
  t.match(events.items[1], { error_id: first.json().error_id, tags: { release: '1.0' }, source: 'api' });

  t.test('resolve, recur, reopen; ignored stays ignored', async (t) => {
    const url = `/v1/observability/issues/${other.issue_id}`;
    t.equal((await patch(app, a, url, { status: 'resolved' })).json().status, 'resolved');
    t.equal((await get(app, a, '/v1/observability/issues?status=resolved')).json().items.length, 1);
    await send({ message: 'x is undefined', stack: stackAt(12) });
    t.match(
      (await get(app, a, url)).json(),
      { status: 'unresolved', count: 2 },
      'a resolved issue that recurs reopens'
    );
    t.equal((await patch(app, a, url, { status: 'ignored' })).json().status, 'ignored');
    await send({ message: 'x is undefined', stack: stackAt(12) });
    t.match((await get(app, a, url)).json(), { status: 'ignored', count: 3 });
    t.equal((await patch(app, a, url, { status: 'closed' })).statusCode, 400);
  });

  t.test("another account's issues are 404 and its errors group apart", async (t) => {
    t.equal((await get(app, b, `/v1/observability/issues/${again.issue_id}`)).statusCode, 404);
    t.equal((await get(app, b, `/v1/observability/issues/${again.issue_id}/events`)).statusCode, 404);
    t.equal(
      (await patch(app, b, `/v1/observability/issues/${again.issue_id}`, { status: 'resolved' })).statusCode,
      404
    );
    const theirs = (await send({ message: 'x is undefined', stack: stackAt(10) }, b)).json();
    t.not(theirs.issue_id, again.issue_id);
    t.equal((await get(app, b, '/v1/observability/issues')).json().items.length, 1);
  });

  t.test('bad input: 400, nothing stored', async (t) => {
    const before = [await rowCount(app, 'obs_errors'), await rowCount(app, 'obs_issues')];
    for (const body of [
      {},
      { message: '' },
      { message: 'm', extra: 1 },
      { message: 'm', tags: { a: 1 } },
      { message: 'm', stack: 'x'.repeat(70_000) },
      { message: 'm', tags: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
    ]) {
      const res = await send(body);
      t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 60));
      t.equal(res.json().error.code, 'validation_failed');
    }
    t.same([await rowCount(app, 'obs_errors'), await rowCount(app, 'obs_issues')], before);
  });

  t.test('retention removes old events and issues not seen since', async (t) => {
    const n = await rowCount(app, 'obs_errors');
    await app.svc.db.updateTable('obs_errors').set({ created_at: 1 }).where('issue_id', '=', m1.issue_id).execute();
    await app.svc.db.updateTable('obs_issues').set({ last_seen: 1 }).where('issue_id', '=', m1.issue_id).execute();
    const removed = await app.svc.retention.run(Date.now());
    t.equal(removed.observability_errors, 2);
    t.equal(await rowCount(app, 'obs_errors'), n - 2);
    t.equal((await get(app, a, `/v1/observability/issues/${m1.issue_id}`)).statusCode, 404);
  });
});
