import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runnable } from '../../helpers/runnable.js';
import { resultAreaApp } from '../../helpers/result-area-app.js';
import type { Tap } from '../../helpers/tap.js';

/** Stand-ins for the chromium and tesseract engines (test-only vendors, loaded by path as a third-party one is). */
export const STAND_IN_RENDER = runnable('./stand-in-render.ts', import.meta.url);
export const STAND_IN_OCR = runnable('./stand-in-ocr.ts', import.meta.url);

/** Config for the stand-ins, routed to them alone (a real engine, when registered, is not tried). */
export const STAND_INS = {
  vendors: [
    { id: 'stand-in-render', use: STAND_IN_RENDER },
    { id: 'stand-in-ocr', use: STAND_IN_OCR },
  ],
  routes: { 'pdf.render': { targets: ['stand-in-render'] }, 'pdf.ocr': { targets: ['stand-in-ocr'] } },
};

/** A listening gateway (result URLs work with fetch) and an activated account. */
export async function pdfApp(t: Tap, overrides: Record<string, any> = {}) {
  const area = await resultAreaApp(t, overrides);
  /** The bytes behind a result URL. */
  const download = async (url: string) => {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
    return { type: res.headers.get('content-type'), data: Buffer.from(await res.arrayBuffer()) };
  };
  return { ...area, download };
}

/**
 * A loopback server answering GET /<name> with files[name] (PDFs by default), 404 otherwise.
 * Returns the URL of a name; `.asked` lists the names requested, in order.
 */
export async function serveFiles(
  t: Tap,
  files: Record<string, Buffer | string>,
  types: Record<string, string> = {}
): Promise<((name: string) => string) & { asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    asked.push(name);
    const body = files[name];
    if (body === undefined) return (res.writeHead(404).end('not found'), undefined);
    res.writeHead(200, { 'content-type': types[name] ?? 'application/pdf' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  return Object.assign((name: string) => `http://127.0.0.1:${port}/${name}`, { asked });
}
