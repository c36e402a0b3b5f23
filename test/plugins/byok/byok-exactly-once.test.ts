import t from 'tap';
import { aiApp } from '../ai/setup.js';
import { checkExactlyOnce } from '../../helpers/exactly-once.js';

// Issue 27: registered credentials commit with their stored answer, so a retry never
// registers them a second time under a new id.

t.test('POST /v1/byok is exactly once', async (t) => {
  const { app, auth } = await aiApp(t, {}, { oaKey: '' });
  const register = (alias: string) => (key: string) => ({
    method: 'POST' as const,
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'openai', alias, credentials: { api_key: 'sk-oa' }, idempotency_key: key },
  });
  await checkExactlyOnce(t, app, {
    request: register('mine'),
    other: register('other'),
    state: () => app.svc.db.selectFrom('byok_keys').select(['byok_id', 'alias']).execute(),
    answered: (t, body) => t.match(body, { provider: 'openai', alias: 'mine', state: 'active', byok_id: /^byok_/ }),
  });
});
