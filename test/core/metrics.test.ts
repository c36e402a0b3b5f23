import t from 'tap';
import { Gauge } from 'prom-client';
import { makeApp, activate } from '../helpers/app.js';

// database-independent: the metrics registry; no row is read.

/** The value of one sample line, by metric name and exact label set; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]])
    );
    if (
      Object.keys(got).length === Object.keys(labels).length
      && Object.entries(labels).every(([k, v]) => got[k] === v)
    )
      return Number(m[3]);
  }
  return undefined;
}

t.test('GET /metrics counts requests by method, route template and status', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  for (let i = 0; i < 3; i++)
    t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode, 200);
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance' })).statusCode, 401);
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/v1/account/keys/key_doesnotexist', headers: a.auth })).statusCode,
    404
  );
  t.equal((await app.inject({ method: 'GET', url: '/v1/no/such/thing/abc123' })).statusCode, 404);

  const res = await app.inject({ method: 'GET', url: '/metrics' });
  t.equal(res.statusCode, 200, 'no key needed');
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const text = res.body;
  t.equal(sample(text, 'http_requests_total', { method: 'POST', route: '/v1/activate', status: '200' }), 1);
  t.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/v1/account/balance', status: '200' }), 3);
  t.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/v1/account/balance', status: '401' }), 1);
  t.equal(
    sample(text, 'http_requests_total', { method: 'DELETE', route: '/v1/account/keys/:key_id', status: '404' }),
    1,
    'the template, not the id'
  );
  t.equal(
    sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }),
    1,
    'unknown paths share one series'
  );
  t.notMatch(text, /abc123|key_doesnotexist/, 'raw URLs never become labels');
  t.equal(
    sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/v1/account/balance', status: '200' }),
    3
  );
  t.equal(
    sample(text, 'http_request_duration_seconds_bucket', {
      le: '+Inf',
      method: 'GET',
      route: '/v1/account/balance',
      status: '200',
    }),
    3
  );
  t.ok(
    sample(text, 'http_request_duration_seconds_sum', { method: 'GET', route: '/v1/account/balance', status: '200' })!
      > 0
  );
  t.match(text, /^# TYPE process_cpu_user_seconds_total counter$/m, 'process default metrics');
  t.match(text, /^nodejs_heap_size_used_bytes \d+/m);

  const again = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  t.equal(
    sample(again, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' }),
    1,
    'the scrape before counts too'
  );

  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  t.notOk(doc.paths['/metrics'], 'not part of the API document');
});

t.test('each app has its own registry', async (t) => {
  // One app after the other (each subtest drops its database at its end): a registry shared
  // by the process would still hold the first app's counts when the second is scraped.
  const labels = { method: 'GET', route: '/v1/version', status: '200' };
  await t.test('first app', async (t) => {
    const { app } = await makeApp(t);
    await app.inject({ method: 'GET', url: '/v1/version' });
    await app.inject({ method: 'GET', url: '/v1/version' });
    t.equal(sample((await app.inject({ method: 'GET', url: '/metrics' })).body, 'http_requests_total', labels), 2);
  });
  await t.test('second app', async (t) => {
    const { app } = await makeApp(t);
    await app.inject({ method: 'GET', url: '/v1/version' });
    t.equal(sample((await app.inject({ method: 'GET', url: '/metrics' })).body, 'http_requests_total', labels), 1);
  });
});

t.test('vendor gauges follow the router, and the core can add its own', async (t) => {
  const { app } = await makeApp(t);
  const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
  let text = await scrape();
  t.equal(sample(text, 'svc_vendor_cooldown_seconds', { vendor: 'sandbox-payments' }), 0);
  t.equal(sample(text, 'svc_vendor_failure_streak', { vendor: 'sandbox-payments' }), 0);
  t.equal(sample(text, 'svc_capability_available', { capability: 'payments.checkout' }), 1);

  app.svc.router.cooldowns.failure('sandbox-payments', 'unavailable');
  app.svc.router.cooldowns.failure('sandbox-payments', 'unavailable');
  text = await scrape();
  const left = sample(text, 'svc_vendor_cooldown_seconds', { vendor: 'sandbox-payments' })!;
  t.ok(left > 0 && left <= 4, `cooling for ${left} s (2 s, doubled on the second failure)`);
  t.equal(sample(text, 'svc_vendor_failure_streak', { vendor: 'sandbox-payments' }), 2);
  t.equal(sample(text, 'svc_capability_available', { capability: 'payments.checkout' }), 0);

  app.svc.router.cooldowns.success('sandbox-payments');
  text = await scrape();
  t.equal(sample(text, 'svc_vendor_cooldown_seconds', { vendor: 'sandbox-payments' }), 0);
  t.equal(sample(text, 'svc_capability_available', { capability: 'payments.checkout' }), 1);

  new Gauge({
    name: 'svc_jobs_queued',
    help: 'Jobs waiting.',
    registers: [app.metrics.registry],
    collect() {
      this.set(7);
    },
  });
  t.equal(sample(await scrape(), 'svc_jobs_queued', {}), 7);
});
