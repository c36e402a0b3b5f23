// The messaging bench's anchor, in its own process as the gateway is in its own: nodemailer's
// pooled SMTP transport (the smtp vendor's defaults: 5 connections, 100 messages each) sending
// the bench's messages straight to the sink, every message of a round handed to it at once.
// Driven over IPC: `{ n, round }` → sends n messages → `{ ms }` when nodemailer resolved them all.
import nodemailer from 'nodemailer';
import { DKIM_DOMAIN, DKIM_SELECTOR, FROM, orderMail } from './message.mjs';

const transport = nodemailer.createTransport({
  host: '127.0.0.1',
  port: Number(process.env.BENCH_SINK_PORT),
  secure: false,
  ignoreTLS: true,
  pool: true,
  maxConnections: 5,
  maxMessages: 100,
});
const dkim = { domainName: DKIM_DOMAIN, keySelector: DKIM_SELECTOR, privateKey: process.env.BENCH_DKIM_KEY };

process.on('message', async ({ n, round }) => {
  try {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const m = orderMail(i);
        return transport.sendMail({ from: FROM, ...m, messageId: `<direct-${round}-${i}@${DKIM_DOMAIN}>`, dkim });
      })
    );
    process.send({ ms: performance.now() - t0 });
  } catch (e) {
    process.send({ error: e?.stack ?? String(e) });
  }
});
process.on('disconnect', () => {
  transport.close();
  process.exit(0);
});
