// The messaging bench: emails through the gateway's POST /v1/email/send (the outbox, then the
// smtp vendor's pooled transport) to a local SMTP sink, against nodemailer's pooled transport
// sending the same messages straight to the same sink, in alternating rounds of the same run.
// Run it with `npm run bench -- messaging`; see BENCHMARKS.md, `messaging`.
import { fork } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { activate, cleanup, startGateway, stop } from '../core/processes.mjs';
import { calibrationLine } from '../lib/calibration.mjs';
import { fmt, line, load, treeCpu } from '../lib/measure.mjs';
import { DKIM_DOMAIN, DKIM_SELECTOR, FROM, orderMail } from './message.mjs';
import { smtpSink } from './sink.mjs';
import { perEmail, threadCpu } from './threads.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const N = Number(process.env.BENCH_EMAILS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// A side, before the rounds, not counted: after a warm-up of 100, the gateway's first round of 2,000 took
// 40–50 % more CPU an email than the next ones; after 500, still 25 % (nodemailer's 15 %).
const WARM = Number(process.env.BENCH_WARM ?? 2000);
const WIDTH = 16; // API calls in flight, as many as the outbox sends at once (jobs.concurrency)
const ROUND_MS = 300_000;

/** The gateway from dist: SQLite, the smtp vendor (defaults: pooled, 5 connections) pointed at the sink. */
async function gatewaySide(sink, privateKey) {
  const smtp = {
    url: `smtp://127.0.0.1:${sink.port}`,
    dkim: { domain: DKIM_DOMAIN, selector: DKIM_SELECTOR, private_key: privateKey },
  };
  const gw = await startGateway(root, {
    // BENCH_NODE_ARGS passes flags to the gateway (`--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
    nodeArgs: (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    config: [
      'egress: { allow_private: true }',
      'plugins:',
      `  email: { default_from: ${JSON.stringify(`${FROM.name} <${FROM.address}>`)} }`,
      'vendors:',
      `  - { id: mail, use: smtp, config: ${JSON.stringify(smtp)} }`,
    ],
  });
  const key = await activate(gw.base);
  const http = new Pool(gw.base, { connections: WIDTH, keepAliveTimeout: 60_000 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const post = async (i) => {
    const res = await http.request({
      method: 'POST',
      path: '/v1/email/send',
      headers,
      body: JSON.stringify(orderMail(i)),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new Error(`POST /v1/email/send answered ${res.statusCode}: ${text.slice(0, 300)}`);
  };
  return {
    /** n sends, WIDTH at a time; resolves with the ms when the last was accepted. */
    async send(n, t0) {
      let next = 0;
      await Promise.all(
        Array.from({ length: WIDTH }, async () => {
          while (next < n) await post(next++);
        })
      );
      return performance.now() - t0;
    },
    cpu: () => treeCpu(gw.child.pid),
    threads: () => threadCpu(gw.child.pid),
    threadsLine: (before, after, n) => perEmail(gw.child.pid, before, after, n),
    close: async () => {
      await http.close();
      await stop(gw.child);
    },
  };
}

/** nodemailer in a child process of its own, driven over IPC (direct.mjs). */
function directSide(sink, privateKey) {
  const child = fork(join(dirname(fileURLToPath(import.meta.url)), 'direct.mjs'), {
    env: { ...process.env, BENCH_SINK_PORT: String(sink.port), BENCH_DKIM_KEY: privateKey },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let round = 0;
  return {
    send(n, t0) {
      return new Promise((resolve, reject) => {
        child.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve(performance.now() - t0)));
        child.send({ n, round: round++ });
      });
    },
    cpu: () => treeCpu(child.pid),
    close: () => child.connected && child.disconnect(),
    child,
  };
}

/** One round of one side: n messages handed over, then all received by the sink. */
async function round(side, sink, n) {
  const c0 = side.cpu();
  const t0s = side.threads?.();
  const base = sink.count;
  const t0 = performance.now();
  // How many were at the sink when the last send was handed over: the rest is sent after the accepts.
  let atHanded = 0;
  const [handedMs, reachedAt] = await Promise.all([
    side.send(n, t0).then((ms) => ((atHanded = sink.count - base), ms)),
    sink.reach(base + n, ROUND_MS),
  ]);
  const cpu = side.cpu() - c0;
  const threads = t0s && side.threadsLine(t0s, side.threads(), n);
  return { handedMs, atHanded, deliveredMs: reachedAt - t0, cpu, threads };
}

const rate = (n, ms) => (n * 1000) / ms;

/** The gateway's sends after its last accept: how many were left, and their rate. */
function afterAccepts(n, out) {
  const left = n - out.atHanded;
  return `${left} after the last accept at ${fmt(rate(left, out.deliveredMs - out.handedMs))}/s`;
}

async function main() {
  process.stdout.write(
    `bench messaging: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `${ROUNDS} rounds × ${N} emails a side (text + HTML, ~3 KB signed, DKIM RSA-2048), alternating; gateway on SQLite, `
      + `${WIDTH} API calls in flight; nodemailer pool (5 connections) handed each round's messages at once\n`
  );
  process.stdout.write(`${await calibrationLine()}\n`);
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const sink = await smtpSink();
  const gw = await gatewaySide(sink, privateKey);
  const direct = directSide(sink, privateKey);
  const sum = { gateway: { n: 0, acceptMs: 0, deliverMs: 0, cpu: 0 }, direct: { n: 0, deliverMs: 0, cpu: 0 } };
  try {
    // Warm both: the gateway's workers and connections, the child's pool and JIT.
    for (const [who, side] of [
      ['gateway', gw],
      ['direct', direct],
    ]) {
      const out = await round(side, sink, WARM);
      process.stdout.write(
        `warm-up ${who}: ${WARM} emails, ${fmt((out.cpu * 1000) / WARM, 2)} ms CPU/email`
          + `${out.threads ? ` (${out.threads})` : ''}, not counted\n`
      );
    }
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ['gateway', 'direct'] : ['direct', 'gateway'];
      for (const who of order) {
        const out = await round(who === 'gateway' ? gw : direct, sink, N);
        const s = sum[who];
        s.n += N;
        s.deliverMs += out.deliveredMs;
        s.cpu += out.cpu;
        if (who === 'gateway') s.acceptMs += out.handedMs;
        process.stdout.write(
          `round ${r + 1} ${who}: `
            + (who === 'gateway' ? `${N} accepted in ${fmt(out.handedMs)} ms (${fmt(rate(N, out.handedMs))}/s), ` : '')
            + `all ${N} at the sink after ${fmt(out.deliveredMs)} ms (${fmt(rate(N, out.deliveredMs))}/s), `
            + (who === 'gateway' ? `${afterAccepts(N, out)}, ` : '')
            + `${fmt((out.cpu * 1000) / N, 2)} ms CPU/email${out.threads ? ` (${out.threads})` : ''}, load ${load()}\n`
        );
      }
    }
  } finally {
    await gw.close();
    direct.close();
  }
  for (const side of ['gateway', 'direct']) {
    const head = sink.head(side) ?? '';
    if (!/^DKIM-Signature: /m.test(head)) throw new Error(`the ${side} side's messages are not DKIM-signed`);
  }
  if (sink.duplicates || sink.unnamed)
    throw new Error(`the sink saw ${sink.duplicates} duplicates and ${sink.unnamed} messages without a Message-ID`);
  process.stdout.write(`sink: ${sink.count} distinct messages, no duplicates; both sides' messages DKIM-signed\n`);
  await sink.close();

  const g = sum.gateway;
  const d = sum.direct;
  const accepted = rate(g.n, g.acceptMs);
  const delivered = rate(g.n, g.deliverMs);
  const directRate = rate(d.n, d.deliverMs);
  const gCpu = `${fmt((g.cpu * 1000) / g.n, 2)} ms CPU/email, gateway`;
  const dCpu = `${fmt((d.cpu * 1000) / d.n, 2)} ms CPU/email, nodemailer`;
  const anchor = `${fmt(directRate)} emails/s delivered (${dCpu})`;
  line(
    'accepted-vs-direct',
    `${fmt(accepted)} emails/s accepted (${gCpu})`,
    anchor,
    accepted / directRate,
    '≥ 5×',
    accepted >= 5 * directRate
  );
  line(
    'delivered-vs-direct',
    `${fmt(delivered)} emails/s delivered (${gCpu})`,
    anchor,
    delivered / directRate,
    '≥ 0.8×',
    delivered >= 0.8 * directRate
  );
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench messaging: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
