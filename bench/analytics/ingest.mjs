// The ingest side of the analytics bench: batches of 100 events posted by keep-alive connections
// from the bench process, every batch fresh (its own uuids, so the gateway stores each one), to
// the gateway's POST /v1/analytics/track and, as PostHog's capture wire, to the floor's /batch/.
import { Agent, request } from 'node:http';
import { cpuSeconds } from '../core/processes.mjs';

const BATCH = 100;
const NAMES = ['pageview', 'click', 'signup', 'activate', 'invite', 'purchase'];

/**
 * A batch's JSON as a template: `@` stands for the batch's number, which makes its uuids unique,
 * and `~` for the time it is sent, every event's timestamp, as an SDK flushing its queue sends them.
 */
function template(posthog, key) {
  const events = Array.from({ length: BATCH }, (_, i) => ({
    event: NAMES[i % NAMES.length],
    distinct_id: `user-${i * 37}`,
    properties: { plan: i % 2 ? 'pro' : 'free', $lib: 'posthog-node', $current_url: `https://example.com/p/${i}` },
    timestamp: '~',
    uuid: `0192b7a0-0000-7000-8000-@${String(i).padStart(3, '0')}`,
  }));
  const json = JSON.stringify(posthog ? { api_key: key, batch: events } : events);
  return json.split('~').map((part) => part.split('@'));
}

/**
 * A side of the ingest target: `url` and headers, and whose CPU to count. `posthog` sends the
 * PostHog body (`{ api_key, batch }`), else the track body (the list of events).
 */
export function ingestSide({ url, headers, posthog, key, pid }) {
  const parts = template(posthog, key);
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let seq = 0;
  const post = () =>
    new Promise((resolve, reject) => {
      const n = (seq++).toString(16).padStart(9, '0');
      const ts = new Date().toISOString();
      const body = parts.map((p) => p.join(n)).join(ts);
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            res.statusCode === 200
              ? resolve()
              : reject(new Error(`${url} answered ${res.statusCode}: ${Buffer.concat(chunks)}`))
          );
        }
      );
      req.on('error', reject);
      req.end(body);
    });
  /** `connections` loops posting for `ms`; events/s and CPU µs an event of `pid`. */
  const run = async (connections, ms) => {
    const c0 = cpuSeconds(pid);
    const t0 = performance.now();
    let batches = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() - t0 < ms) {
          await post();
          batches++;
        }
      })
    );
    const wall = (performance.now() - t0) / 1000;
    const events = batches * BATCH;
    return { events, wall, rate: events / wall, cpuUs: ((cpuSeconds(pid) - c0) * 1e6) / events };
  };
  return { run, close: () => agent.destroy() };
}
