// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { ApiError } from '../../../core/errors.js';
import { guardedFetcher, instance, render, serve } from '../../helpers/chromium-render.js';

// A meta refresh with no delay is a redirect: followed through the guard, so one to a refused
// address fails the render with the guard's 400 every time, never a vendor error or a PDF of
// the page that redirected (issue 27: it was 502 once in 8).

t.test('a meta refresh to a refused address is the egress 400, every time', async (t) => {
  const inst = await instance(t);
  const srv = await serve(t, (_req, res) => res.end('<p>inside</p>'));
  const guard = guardedFetcher(t);
  const refresh = `<meta http-equiv="refresh" content="0; url=${srv.base}/inside"><p>outside</p>`;
  // The page itself comes from an allowed site (page.test stands in for one); the rest is guarded.
  const fetchResource: typeof guard = async (url, init) =>
    new URL(url).hostname === 'page.test'
      ? { status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from(refresh) }
      : guard(url, init);
  for (let i = 0; i < 8; i++) {
    for (const input of [{ url: 'http://page.test/' }, { html: refresh }]) {
      const err = await render(inst, { ...input, fetchResource }).then(
        () => new Error('rendered'),
        (e) => e
      );
      t.ok(err instanceof ApiError, `${Object.keys(input)[0]} #${i + 1}: the guard's error (${err.message})`);
      t.match(err, { code: 'validation_failed', message: /loopback/ });
    }
  }
  t.same(srv.hits, [], 'the refused address was never asked');
});
