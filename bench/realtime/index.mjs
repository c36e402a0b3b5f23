// The realtime bench: one publish fanned out to 5,000 sockets by the gateway (POST
// /v1/realtime/publish → the bus → every subscriber of the channel) against a plain `ws` server
// broadcasting the same payload to 5,000 sockets, in alternating rounds of the same run; then
// the gateway's memory with ~20,000 idle subscribed sockets. `npm run bench -- realtime`;
// see BENCHMARKS.md, `realtime`.
import { fork } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { activate, cleanup, freePort, rssBytes, start, startGateway, stop, waitFor200 } from '../core/processes.mjs';
import { fmt, line, load, mib } from '../lib/measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 5000);
const PUBLISHES = Number(process.env.BENCH_PUBLISHES ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// The goal names 20,000; the machine's open-file limit (20,000 a process, hard) leaves the
// gateway room for ~19,900 sockets beside its own files, so the figure is extrapolated from those.
const IDLE = Number(process.env.BENCH_IDLE ?? 19_800);
const IDLE_GOAL = 20_000;
const PAYLOAD = { order_id: 'ord_12345', status: 'shipped', items: 3, note: 'x'.repeat(40) };

function subscriberProcess() {
  const child = fork(join(here, 'subscribers.mjs'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (msg, key) =>
    new Promise((resolve, reject) => {
      const on = (m) => {
        if (m.error) return reject(new Error(m.error));
        if (key in m) {
          child.off('message', on);
          resolve(m[key]);
        }
      };
      child.on('message', on);
      if (msg) child.send(msg);
    });
  return { child, ask };
}

async function main() {
  process.stdout.write(
    `bench realtime: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `${ROUNDS} rounds × ${PUBLISHES} publishes to ${SUBSCRIBERS} sockets a side, alternating; gateway on SQLite `
      + `(local bus), subscribers in their own processes\n`
  );
  const limits = `{ connections: 30000, messages_per_second: 1000000, channels_per_connection: 10 }`;
  const gw = await startGateway(root, { config: ['plugins:', `  realtime: { tier_limits: { bench: ${limits} } }`] });
  const key = await activate(gw.base);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const tokenRes = await fetch(`${gw.base}/v1/realtime/token`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ channels: ['fan', 'idle'], ttl_seconds: 86_400 }),
  });
  const { token } = await tokenRes.json();
  const wsUrl = `${gw.base.replace(/^http/, 'ws')}/v1/realtime/ws?token=${encodeURIComponent(token)}`;

  const plainPort = await freePort();
  const plain = start(process.execPath, [join(here, 'plain-server.mjs')], { PORT: String(plainPort) });
  const plainBase = `http://127.0.0.1:${plainPort}`;
  await waitFor200(plainBase, plain, performance.now());

  const gwSubs = subscriberProcess();
  const plainSubs = subscriberProcess();
  await gwSubs.ask({ open: { url: wsUrl, n: SUBSCRIBERS, subscribe: 'fan' } }, 'opened');
  await plainSubs.ask({ open: { url: plainBase.replace(/^http/, 'ws'), n: SUBSCRIBERS } }, 'opened');
  const sides = {
    gateway: {
      subs: gwSubs,
      publish: async () => {
        const r = await fetch(`${gw.base}/v1/realtime/publish`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ channel: 'fan', event: 'order', data: PAYLOAD }),
        });
        if (r.status !== 200) throw new Error(`publish answered ${r.status}: ${await r.text()}`);
      },
    },
    plain: {
      subs: plainSubs,
      publish: async () => {
        const body = JSON.stringify({ type: 'message', channel: 'fan', event: 'order', data: PAYLOAD });
        const r = await fetch(`${plainBase}/publish`, { method: 'POST', body });
        await r.text();
      },
    },
  };
  const round = async (side, n) => {
    const done = side.subs.ask({ expect: n * SUBSCRIBERS }, 'ready').then(() => side.subs.ask(null, 'done'));
    await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await side.publish();
    await done;
    return performance.now() - t0;
  };
  const sum = { gateway: 0, plain: 0 };
  try {
    for (const who of ['gateway', 'plain']) await round(sides[who], 5); // warm-up, not counted
    for (let r = 0; r < ROUNDS; r++) {
      for (const who of r % 2 === 0 ? ['gateway', 'plain'] : ['plain', 'gateway']) {
        const ms = await round(sides[who], PUBLISHES);
        sum[who] += ms;
        const rate = (PUBLISHES * SUBSCRIBERS * 1000) / ms;
        process.stdout.write(
          `round ${r + 1} ${who}: ${PUBLISHES} × ${SUBSCRIBERS} delivered in ${fmt(ms)} ms (${fmt(rate)} messages/s), load ${load()}\n`
        );
      }
    }
    await gwSubs.ask({ close: true }, 'closed');
    await plainSubs.ask({ close: true }, 'closed');
    plainSubs.child.disconnect();
    await stop(plain);

    // Idle sockets: each subscribed to one channel, then nothing.
    await new Promise((r) => setTimeout(r, 2000));
    const before = rssBytes(gw.child.pid);
    const idleSubs = [gwSubs, subscriberProcess()];
    await Promise.all(
      idleSubs.map((s, i) => s.ask({ open: { url: wsUrl, n: Math.ceil(IDLE / 2) - i, subscribe: 'idle' } }, 'opened'))
    );
    const opened = IDLE - 1;
    await new Promise((r) => setTimeout(r, 3000));
    const after = rssBytes(gw.child.pid);
    const per = (after - before) / opened;
    const projected = before + per * IDLE_GOAL;
    process.stdout.write(
      `idle: ${opened} subscribed sockets, gateway RSS ${mib(before)} before, ${mib(after)} with them `
        + `(${fmt(per / 1024, 1)} KiB a socket); ${IDLE_GOAL} → ${mib(projected)}\n`
    );
    for (const s of idleSubs) {
      await s.ask({ close: true }, 'closed');
      s.child.disconnect();
    }
    const g = (PUBLISHES * SUBSCRIBERS * ROUNDS * 1000) / sum.gateway;
    const p = (PUBLISHES * SUBSCRIBERS * ROUNDS * 1000) / sum.plain;
    line(
      'fanout-vs-plain-ws',
      `${fmt(g)} messages/s delivered by the gateway (${SUBSCRIBERS} subscribers)`,
      `${fmt(p)} messages/s by a plain ws broadcast`,
      g / p,
      '≥ 0.8×',
      g >= 0.8 * p
    );
    const GIB = 1024 ** 3;
    line(
      'idle-20k-rss',
      `${mib(projected)} RSS for ${IDLE_GOAL} idle sockets (${opened} measured)`,
      '1 GiB',
      projected / GIB,
      '≤ 1×',
      projected <= GIB
    );
  } finally {
    await stop(gw.child);
  }
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench realtime: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
