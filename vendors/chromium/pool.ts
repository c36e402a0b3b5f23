import type { Browser, BrowserType } from 'playwright-core';
import { nicedExecutable } from './niced-executable.js';

/**
 * The flags every launch uses: no GPU, no sandbox (containers), nothing phoning home; WebRTC
 * only over the proxy (its UDP would leave around it) and no speculative loads.
 */
export const CHROMIUM_FLAGS = [
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface PoolOptions {
  executablePath: string;
  /** Where the launcher that starts the browser at the background nice is written (niced-executable.ts). */
  launcherDir: string;
  /** The nice of the browser's own scheduling group (its session's autogroup): niced-executable.ts. */
  groupNice: number;
  /**
   * The forward proxy every connection of the browser goes through (the gateway's egress
   * rules): what a page loads outside the request interception (prefetches, beacons,
   * keepalive fetches, WebRTC's TURN over TCP) meets the guard there.
   */
  proxy: () => Promise<string>;
  args: string[];
  /** Documents a browser renders before it is replaced (0: never). */
  recycleAfter: number;
  /** Longest a launch may take (Playwright's own default is 3 minutes). */
  launchTimeoutMs?: number;
}

interface Slot {
  browser: Browser;
  served: number;
  active: number;
  retired: boolean;
}

/** Lease of the warm browser for one job; `release` must be called once the job is done. */
export interface Lease {
  browser: Browser;
  release(): void;
}

/**
 * One warm Chromium, launched on the first job, shared by every job (each on a tab of its
 * own: tab.ts). A browser that crashed or disconnected is dropped and the next job launches a
 * fresh one; after `recycleAfter` documents the browser is retired (closed once its jobs end)
 * so a long-running gateway's browser memory stays bounded.
 */
export class BrowserPool {
  private current?: Promise<Slot>;
  private readonly slots = new Set<Slot>();
  private chromium?: Promise<BrowserType>;
  private launcher?: Promise<string>;
  private closed = false;

  constructor(private readonly opts: PoolOptions) {}

  /** playwright-core is loaded on the first render, not at boot: most gateways never render a PDF. */
  private browserType(): Promise<BrowserType> {
    this.chromium ??= import('playwright-core').then((m) => m.chromium);
    return this.chromium;
  }

  /** A fresh browser with the pool's flags (the bench's cold side launches through this too). */
  async launch(): Promise<Browser> {
    this.launcher ??= nicedExecutable(this.opts.executablePath, this.opts.launcherDir, this.opts.groupNice);
    // A launcher that could not be written is not kept: the next launch tries again.
    this.launcher.catch(() => (this.launcher = undefined));
    const [chromium, server, executablePath] = await Promise.all([
      this.browserType(),
      this.opts.proxy(),
      this.launcher,
    ]);
    return chromium.launch({
      // Chromium bypasses a proxy for loopback unless told not to: <-loopback> removes that rule.
      proxy: { server, bypass: '<-loopback>' },
      // The browser and every process it starts at the background nice.
      executablePath,
      headless: true,
      chromiumSandbox: false,
      args: [...CHROMIUM_FLAGS, ...this.opts.args],
      // Jobs share a launch, so no one job's abort may cancel it: a bound of its own instead.
      timeout: this.opts.launchTimeoutMs ?? 30_000,
    });
  }

  private async start(): Promise<Slot> {
    const browser = await this.launch();
    const slot: Slot = { browser, served: 0, active: 0, retired: false };
    this.slots.add(slot);
    browser.on('disconnected', () => {
      this.slots.delete(slot);
      slot.retired = true;
    });
    return slot;
  }

  /** The warm browser for one job (one document, towards recycling). */
  async acquire(): Promise<Lease> {
    if (this.closed) throw new Error('the Chromium pool is closed');
    let from = this.current;
    let slot = from ? await from.catch(() => undefined) : undefined;
    if (!slot || slot.retired || !slot.browser.isConnected()) {
      // Jobs arriving together share one launch; a failed launch is not cached, the next job tries again.
      from = this.current !== from && this.current ? this.current : this.start();
      this.current = from;
      const launching = from;
      launching.catch(() => {
        if (this.current === launching) this.current = undefined;
      });
      slot = await from;
    }
    const s = slot;
    s.served++;
    s.active++;
    if (this.opts.recycleAfter > 0 && s.served >= this.opts.recycleAfter) {
      s.retired = true;
      if (this.current === from) this.current = undefined;
    }
    let released = false;
    return {
      browser: s.browser,
      release: () => {
        if (released) return;
        released = true;
        s.active--;
        if (s.retired && s.active === 0) void this.retire(s);
      },
    };
  }

  private async retire(slot: Slot): Promise<void> {
    this.slots.delete(slot);
    await slot.browser.close().catch(() => undefined);
  }

  /** How many browsers are running now (tests and the bench). */
  get browsers(): number {
    return this.slots.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = this.current;
    this.current = undefined;
    const last = pending ? await pending.catch(() => undefined) : undefined;
    if (last) this.slots.add(last);
    await Promise.all([...this.slots].map((s) => this.retire(s)));
  }
}
