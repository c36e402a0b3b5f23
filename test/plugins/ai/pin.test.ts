import t from 'tap';
import { aiApp } from './setup.js';

// database-independent: pinning an instance; no row is read but the account's.

// A `vendor` pin names one configured instance and bypasses `routes`: routes order and limit
// automatic routing only (an instance left out of a route still answers when pinned).

t.test('a pinned instance outside routes.<capability>.targets answers; unpinned calls keep the route', async (t) => {
  const { app, auth, oa, an } = await aiApp(t, {
    routes: {
      'ai.chat': { strategy: 'fallback', targets: ['an'] },
      'ai.chat.stream': { strategy: 'fallback', targets: ['an'] },
    },
  });
  const chat = (payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });

  const routed = await chat({ messages: 'x', prefer: 'cheapest' });
  t.equal(routed.statusCode, 200, routed.body);
  t.equal(routed.json().metadata.vendor, 'an', 'the route leaves oa out of automatic routing');
  t.equal(oa.requests.length, 0);

  for (const vendor of ['oa', 'openai']) {
    const pinned = await chat({ messages: 'x', vendor });
    t.equal(pinned.statusCode, 200, pinned.body);
    t.match(
      pinned.json().metadata,
      { vendor: 'oa', model: 'alpha' },
      `vendor: ${vendor} pins the instance outside the route`
    );
  }
  const streamed = await chat({ messages: 'x', vendor: 'oa', stream: true });
  t.equal(streamed.statusCode, 200, streamed.body.slice(0, 200));
  t.match(streamed.body, /"vendor":"oa"/, 'a pinned stream too');
  t.equal(oa.requests.length, 3);
  t.ok(an.requests.length >= 1);

  const missing = await chat({ messages: 'x', vendor: 'nope' });
  t.equal(missing.statusCode, 503);
  t.match(missing.json().error, {
    code: 'no_vendor_available',
    param: 'vendor',
    message: /Configured for it: oa, an\./,
  });
});
