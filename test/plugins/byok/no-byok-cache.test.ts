import t from 'tap';
import { NoByokCache, NO_BYOK_TTL_MS } from '../../../plugins/byok/no-byok-cache.js';

t.test('an empty lookup is remembered until a change or the expiry', async (t) => {
  let now = 1_000;
  const c = new NoByokCache(() => now);
  t.notOk(c.has('acc_a'));
  c.add('acc_a', c.epoch);
  t.ok(c.has('acc_a'));
  t.notOk(c.has('acc_b'), 'per account');
  c.changed('acc_a');
  t.notOk(c.has('acc_a'), 'a change to the account drops it');
  c.add('acc_a', c.epoch);
  now += NO_BYOK_TTL_MS;
  t.notOk(c.has('acc_a'), 'expired');
});

t.test('a lookup that began before a change is not remembered', async (t) => {
  const c = new NoByokCache();
  const began = c.epoch;
  c.changed('acc_a'); // a key was registered while the lookup ran
  c.add('acc_a', began);
  t.notOk(c.has('acc_a'));
});
