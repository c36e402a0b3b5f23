import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import chromiumVendor from '../../vendors/chromium/index.js';
import { CoreConfigSchema } from '../../config/schema.js';
import { Egress } from '../../core/egress/egress.js';
import type { PdfOutput, PdfRenderInput, ResourceFetcher } from '../../core/capabilities/pdf.js';
import type { VendorInstance } from '../../core/define.js';
import { vendorContext } from './vendor-context.js';

// What the chromium tests share: an instance of the vendor, an egress with the gateway's
// default rules, a loopback server that records what reached it, the Chromium processes.

export const CHROMIUM = '/usr/bin/chromium';

/** A fetcher that serves every URL from a loopback server: the "trusted network" tests stand in for. */
export function directFetcher(): ResourceFetcher {
  return async (url, init) => {
    const res = await fetch(url, { method: init.method, headers: init.headers, body: init.body as any });
    return {
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body: Buffer.from(await res.arrayBuffer()),
    };
  };
}

/** `fetchResource` bound to a core Egress with the default config (no private, no loopback), as the area binds it. */
export function guardedFetcher(t: any): ResourceFetcher {
  const cfg = Value.Default(CoreConfigSchema.properties.egress, {}) as any;
  const egress = new Egress(cfg);
  t.teardown(() => egress.close());
  return async (url, init) => {
    const res = await egress.fetch(url, { method: init.method, headers: init.headers, body: init.body });
    return { status: res.status, headers: res.headers, body: res.body };
  };
}

/** The vendor, its browser's connections through a forward proxy under the default egress rules, or `proxy`'s. */
export async function instance(
  t: any,
  config: Record<string, unknown> = {},
  proxy?: () => Promise<string>
): Promise<VendorInstance> {
  // group_nice 0: the test machine is shared with other busy sessions, against which a lowered
  // browser group renders several times slower (docs/pdf.md); priority.test.ts checks the group.
  const cfg = Value.Default(chromiumVendor.configSchema, {
    executable_path: CHROMIUM,
    group_nice: 0,
    ...config,
  }) as any;
  const ctx = vendorContext('chromium', t);
  const inst = await chromiumVendor.create(cfg, proxy ? { ...ctx, egressProxy: proxy } : ctx);
  t.teardown(() => inst.close?.());
  return inst;
}

export function render(
  inst: VendorInstance,
  input: Partial<PdfRenderInput> & { fetchResource: ResourceFetcher },
  signal = new AbortController().signal
): Promise<PdfOutput> {
  return inst.capabilities['pdf.render'].invoke(
    { format: 'A4', orientation: 'portrait', javascript: false, ...input },
    { signal, deadline: Date.now() + 60_000 }
  );
}

export interface Served {
  server: Server;
  port: number;
  base: string;
  /** Paths requested so far, in order. */
  hits: string[];
}

export async function serve(
  t: any,
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>
): Promise<Served> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    void handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      })
  );
  const port = (server.address() as AddressInfo).port;
  return { server, port, base: `http://127.0.0.1:${port}`, hits };
}

/**
 * A TrueType font from the system for the web-font test, with its file's base name (its PDF
 * font name starts with it); an unusual face first, so finding it embedded proves the web font
 * was used rather than the default sans-serif. Undefined when the machine has none.
 */
export function systemTtf(): { data: Buffer; name: string } | undefined {
  const found: string[] = [];
  for (const dir of ['/usr/share/fonts/truetype/dejavu', '/usr/share/fonts/truetype/liberation']) {
    try {
      for (const f of readdirSync(dir)) if (f.endsWith('.ttf')) found.push(`${dir}/${f}`);
    } catch {}
  }
  const path = found.find((f) => f.includes('MathTeXGyre')) ?? found.find((f) => f.includes('Mono')) ?? found[0];
  if (!path) return undefined;
  return { data: readFileSync(path), name: path.slice(path.lastIndexOf('/') + 1, -'.ttf'.length) };
}

/** Chromium processes this test process started (its direct children), by pid. */
export function chromiumChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      // By the program's own name: a path in its arguments (a checkout named after it) is not it.
      const argv0 = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] ?? '';
      if (basename(argv0).includes('chromium')) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}
