import t from 'tap';
import { randomBytes } from 'node:crypto';
import { TokenSigner } from '../../../core/auth/tokens.js';
import { scopeAllows, isValidScope } from '../../../core/auth/scopes.js';

t.test('tokens verify, and tampered, foreign-purpose and expired ones are refused', async (t) => {
  const s = new TokenSigner(randomBytes(32));
  const { token, expiresAt } = s.sign('realtime', { acct: 'acct_1', ch: ['a'] }, 60);
  t.ok(expiresAt > Date.now());
  t.same(s.verify('realtime', token).ch, ['a']);
  const [v, body, mac] = token.split('.');
  const forged = Buffer.from(JSON.stringify({ acct: 'acct_2', ch: ['a'], exp: expiresAt })).toString('base64url');
  t.throws(() => s.verify('realtime', `${v}.${forged}.${mac}`), { code: 'unauthenticated' });
  t.throws(() => s.verify('session', token), { code: 'unauthenticated' });
  t.throws(() => s.verify('realtime', `${v}.${body}.${mac.slice(0, -2)}AA`), { code: 'unauthenticated' });
  t.throws(() => s.verify('realtime', 'garbage'), { code: 'unauthenticated' });
  const other = new TokenSigner(randomBytes(32));
  t.throws(() => other.verify('realtime', token), { code: 'unauthenticated' });
  const expired = s.sign('realtime', {}, -1).token;
  t.throws(() => s.verify('realtime', expired), /expired/);
});

t.test('scopes', async (t) => {
  t.ok(scopeAllows(['*'], 'storage:read'));
  t.ok(scopeAllows(['storage'], 'storage:read'));
  t.ok(scopeAllows(['storage:read'], 'storage:read'));
  t.notOk(scopeAllows(['storage:read'], 'storage'));
  t.notOk(scopeAllows(['storage:read'], 'storage:write'));
  t.notOk(scopeAllows(['email'], 'storage:read'));
  t.ok(scopeAllows([], undefined));
  t.ok(isValidScope('email:send'));
  t.notOk(isValidScope('Email'));
  t.notOk(isValidScope('a:b:c'));
});

t.test('a MAC spelled another way (spare bits of the last base64url character) is refused', async (t) => {
  const s = new TokenSigner(randomBytes(32));
  for (let i = 0; i < 20; i++) {
    const { token } = s.sign('p', { i }, 60);
    const last = token.at(-1)!;
    // Flipping the lowest bit of the last character's value changes only padding bits.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[alphabet.indexOf(last) ^ 1];
    t.throws(() => s.verify('p', token.slice(0, -1) + twin), { code: 'unauthenticated' });
  }
});
