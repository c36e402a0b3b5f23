// Subscribers in a process of their own, driven over IPC: open N sockets (to the gateway's native
// endpoint with a subscribe frame, or to the plain server), then count what arrives.
import WebSocket from 'ws';

const sockets = [];
let received = 0;
let want = Infinity;
let t0 = 0;

async function open({ url, n, subscribe, width = 200 }) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        next++;
        const ws = new WebSocket(url, { perMessageDeflate: false });
        await new Promise((resolve, reject) => {
          ws.once('error', reject);
          if (!subscribe) ws.once('open', resolve);
          else {
            ws.once('open', () => ws.send(JSON.stringify({ type: 'subscribe', channel: subscribe, id: 's' })));
            const onMsg = (raw) => {
              if (String(raw).includes('"subscribed"')) {
                ws.off('message', onMsg);
                resolve();
              }
            };
            ws.on('message', onMsg);
          }
        });
        ws.on('message', () => {
          if (++received === want) process.send({ done: performance.now() - t0 });
        });
        sockets.push(ws);
      }
    })
  );
}

process.on('message', async (m) => {
  try {
    if (m.open) {
      await open(m.open);
      process.send({ opened: sockets.length });
    } else if (m.expect) {
      received = 0;
      want = m.expect;
      t0 = performance.now();
      process.send({ ready: true });
    } else if (m.close) {
      for (const ws of sockets) ws.terminate();
      sockets.length = 0;
      process.send({ closed: true });
    }
  } catch (e) {
    process.send({ error: String(e?.stack ?? e) });
  }
});
