// The captcha bench: `service` proof-of-work verifications through the gateway (POST
// /v1/captcha/verify, vendor `service`: auth, the signature and hash check, the replay row, the
// wallet) against altcha-lib's `verifySolution` called in this process on the same kind of
// solutions, in alternating rounds of the same run. Every solution comes from a fresh challenge
// and is solved before its round starts, so solving is never timed. `npm run bench -- captcha`;
// see BENCHMARKS.md, `captcha`.
import { createChallenge, solveChallenge, verifySolution } from 'altcha-lib/v1';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { activate, cleanup, startGateway, stop } from '../core/processes.mjs';
import { calibrationLine } from '../lib/calibration.mjs';
import { fmt, line, load, selfCpu, treeCpu } from '../lib/measure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Solving (altcha-lib, WebCrypto, ~500 hashes a solution) takes far longer than verifying: it bounds the run.
const PER_ROUND = Number(process.env.BENCH_VERIFICATIONS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
// The least difficulty a site key takes: the work is the solver's, and the solver is not timed.
const DIFFICULTY = 1000;
const TTL = 3600;
const GOAL = 0.5;

/** What the widget submits: the solved challenge as base64 JSON. */
async function solved(c) {
  const s = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  if (!s) throw new Error('no solution found');
  const payload = {
    algorithm: c.algorithm,
    challenge: c.challenge,
    number: s.number,
    salt: c.salt,
    signature: c.signature,
  };
  return Buffer.from(JSON.stringify({ ...payload, took: s.took })).toString('base64');
}

/** Run `task(i)` for i < n, `concurrency` at a time. */
async function inFlight(n, concurrency, task) {
  let next = 0;
  const worker = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, worker));
}

async function main() {
  process.stdout.write(
    `bench captcha: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `${ROUNDS} rounds × ${PER_ROUND} verifications a side, alternating, ${CONCURRENCY} in flight; `
      + `gateway on SQLite, difficulty ${DIFFICULTY}, solved before each round\n`
  );
  process.stdout.write(`${await calibrationLine()}\n`);
  const gw = await startGateway(root, { config: ['plugins:', `  captcha: { challenge_ttl_seconds: ${TTL} }`] });
  const key = await activate(gw.base);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const pool = new Pool(gw.base, { connections: CONCURRENCY, pipelining: 1 });
  const call = async (method, path, body) => {
    const r = await pool.request({ method, path, headers, body: body && JSON.stringify(body) });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${method} ${path} answered ${r.statusCode}: ${text}`);
    return JSON.parse(text);
  };
  const { site_key_id } = await call('POST', '/v1/captcha/site-keys', { difficulty: DIFFICULTY });
  const anchorKey = randomBytes(32).toString('hex');

  const sides = {
    // Challenges from the gateway's public endpoint, as a page gets them; verified through the API.
    gateway: {
      prepare: async (n) => {
        const out = [];
        await inFlight(n, CONCURRENCY, async () => {
          out.push(await solved(await call('GET', `/v1/captcha/sites/${site_key_id}/challenge`)));
        });
        return out;
      },
      verify: async (token) => {
        const v = await call('POST', '/v1/captcha/verify', { token, vendor: 'service' });
        if (!v.valid) throw new Error(`gateway refused a fresh solution: ${JSON.stringify(v)}`);
      },
      cpu: () => treeCpu(gw.child.pid),
    },
    // The same challenge shape (signed site key, ttl, expiry in the salt), made and checked here.
    anchor: {
      prepare: async (n) => {
        const out = [];
        await inFlight(n, CONCURRENCY, async () => {
          const c = await createChallenge({
            hmacKey: anchorKey,
            maxnumber: DIFFICULTY,
            expires: new Date(Date.now() + TTL * 1000),
            params: { sk: site_key_id, ttl: String(TTL) },
          });
          out.push(await solved(c));
        });
        return out;
      },
      verify: async (token) => {
        if (!(await verifySolution(token, anchorKey, false))) throw new Error('altcha-lib refused a fresh solution');
      },
      cpu: selfCpu,
    },
  };
  const round = async (side, n) => {
    const tokens = await side.prepare(n);
    const c0 = side.cpu();
    const t0 = performance.now();
    await inFlight(n, CONCURRENCY, (i) => side.verify(tokens[i]));
    return { ms: performance.now() - t0, cpu: side.cpu() - c0 };
  };
  const sum = { gateway: { ms: 0, cpu: 0 }, anchor: { ms: 0, cpu: 0 } };
  try {
    for (const who of ['gateway', 'anchor']) await round(sides[who], 300); // warm-up, not counted
    for (let r = 0; r < ROUNDS; r++) {
      for (const who of r % 2 === 0 ? ['gateway', 'anchor'] : ['anchor', 'gateway']) {
        const { ms, cpu } = await round(sides[who], PER_ROUND);
        sum[who].ms += ms;
        sum[who].cpu += cpu;
        process.stdout.write(
          `round ${r + 1} ${who}: ${PER_ROUND} in ${fmt(ms)} ms (${fmt((PER_ROUND * 1000) / ms)}/s, `
            + `${fmt((cpu * 1e6) / PER_ROUND)} µs CPU a verification), load ${load()}\n`
        );
      }
    }
    const n = PER_ROUND * ROUNDS;
    const rate = (s) => (n * 1000) / s.ms;
    const cpuUs = (s) => fmt((s.cpu * 1e6) / n);
    const g = rate(sum.gateway);
    const a = rate(sum.anchor);
    line(
      'service-verify-vs-altcha',
      `${fmt(g)} verifications/s (${cpuUs(sum.gateway)} µs CPU each, gateway)`,
      `${fmt(a)} verifications/s (${cpuUs(sum.anchor)} µs CPU each, altcha-lib in process)`,
      g / a,
      `≥ ${GOAL}×`,
      g >= GOAL * a
    );
  } finally {
    await pool.close();
    await stop(gw.child);
  }
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench captcha: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
