import t from 'tap';
import { Cooldowns } from '../../../core/router/cooldowns.js';
import { frozenClock } from '../../helpers/clock.js';
import {
  classifyGeneric,
  kindFromStatus,
  parseRetryAfter,
  retryAfterOf,
  VendorFailure,
} from '../../../core/router/failure.js';

t.test('generic classification of what an HTTP adapter sees', async (t) => {
  t.equal(classifyGeneric(new VendorFailure('quota', 'out of credit')), 'quota');
  // A VendorFailure from another copy of the module (a plugin's own dependency) is still one.
  t.equal(classifyGeneric(Object.assign(new Error('x'), { name: 'VendorFailure', kind: 'auth' })), 'auth');
  t.equal(
    classifyGeneric(Object.assign(new Error('x'), { name: 'VendorFailure', kind: 'made_up', status: 500 })),
    'unavailable'
  );
  t.equal(
    classifyGeneric(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })),
    'not_sent'
  );
  t.equal(classifyGeneric(Object.assign(new Error('x'), { code: 'ENOTFOUND' })), 'not_sent');
  t.equal(classifyGeneric(new DOMException('aborted', 'AbortError')), 'timeout');
  t.equal(classifyGeneric(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' })), 'timeout');
  t.equal(classifyGeneric({ status: 429 }), 'rate_limited');
  t.equal(classifyGeneric(new Error('socket hang up')), 'unavailable');
  t.same([400, 401, 402, 403, 404, 408, 422, 429, 500, 503, 504].map(kindFromStatus), [
    'client_error',
    'auth',
    'quota',
    'auth',
    'client_error',
    'timeout',
    'client_error',
    'rate_limited',
    'unavailable',
    'unavailable',
    'timeout',
  ]);
});

t.test('retry-after from a header or an error', async (t) => {
  t.equal(parseRetryAfter('2'), 2000);
  t.equal(parseRetryAfter('-5'), 0);
  const inTen = parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())!;
  t.ok(inTen > 8_000 && inTen <= 10_000, `${inTen}`);
  t.equal(parseRetryAfter('soon'), undefined);
  t.equal(parseRetryAfter(undefined), undefined);
  t.equal(retryAfterOf({ retryAfterMs: 1500 }), 1500);
  t.equal(retryAfterOf({ retryAfterMs: '1500' }), undefined);
  t.equal(retryAfterOf({ retryAfterMs: -1 }), undefined);
  t.equal(retryAfterOf(null), undefined);
});

t.test(
  'cooldowns: longer each failure in a row, capped; retry-after capped at an hour; client errors none',
  async (t) => {
    frozenClock(t); // the time left is read at the instant the cooldown was set, however slow the machine
    const c = new Cooldowns();
    const ms = (id: string) => c.snapshot()[id].until - Date.now();
    c.failure('v', 'client_error');
    t.notOk(c.cooling('v'));
    for (let i = 0; i < 12; i++) c.failure('v', 'unavailable');
    t.equal(c.snapshot().v.streak, 12);
    t.ok(ms('v') <= 5 * 60_000 && ms('v') > 5 * 60_000 - 1_000, 'at most five minutes');
    c.failure('w', 'rate_limited', 2 * 3600_000);
    t.ok(ms('w') <= 3600_000 && ms('w') > 3600_000 - 1_000, 'a two-hour retry-after is held to one hour');
    c.failure('x', 'rate_limited', 0);
    t.notOk(c.cooling('x', Date.now() + 1), 'retry-after 0 means try again now');
    c.success('v');
    t.notOk(c.cooling('v'));
    t.notOk('v' in c.snapshot());
  }
);
