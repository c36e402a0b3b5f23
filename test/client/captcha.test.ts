import t from 'tap';
import { solve } from '../plugins/captcha/captcha-app.js';
import { clientApp, collect, rejects } from './client-app.js';

// client.captcha against a listening gateway on the embedded service vendor: a site key, its
// public challenge solved as the browser does, a token verified once, the widget, errors as SvcError.

t.test('site keys, a challenge solved and verified once, the widget', async (t) => {
  const { c } = await clientApp(t);
  const key = await c.captcha.siteKeys.create({ label: 'signup', difficulty: 1000 });
  t.match(key, { site_key_id: /^csk_/, difficulty: 1000 });
  const token = await solve(await c.captcha.challenge(key.site_key_id));
  t.match(await c.captcha.verify({ token }), { valid: true, vendor: 'service', site_key_id: key.site_key_id });
  t.match(await c.captcha.verify({ token }), { valid: false, reason: 'replayed' });
  t.ok(c.lastCost, 'the verification says what it cost');
  const widget = await c.captcha.widget({ site_key_id: key.site_key_id });
  t.match(widget.html, /<altcha-widget challenge="/);
  t.match(await c.captcha.siteKeys.update(key.site_key_id, { allowed_hostnames: ['shop.example.com'] }), {
    allowed_hostnames: ['shop.example.com'],
  });
  await c.captcha.siteKeys.create({ label: 'second' });
  t.equal((await collect(c.captcha.siteKeys.iterate({ limit: 1 }))).length, 2);
  t.same(await c.captcha.siteKeys.delete(key.site_key_id), { ok: true });
  await rejects(t, c.captcha.siteKeys.get(key.site_key_id), { code: 'not_found', status: 404 }, 'deleted');
  await rejects(t, c.captcha.verify({ token: '' }), { code: 'validation_failed', status: 400 }, 'no token');
});
