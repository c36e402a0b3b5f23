import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  type PDF_CAPABILITIES,
  type PdfRenderInput,
  type ImplOf,
  type VendorInstance,
} from '../../core/kit/vendor.js';
import { ChromiumEngine } from './engine.js';
import { checkChromium, findChromium } from './executable.js';

type Caps = typeof PDF_CAPABILITIES;

/**
 * The embedded PDF renderer: the system's Chromium driven by playwright-core, one warm
 * browser for every job and a fresh context for each. Without a Chromium on the machine it
 * serves nothing (the area answers 503 no_vendor_available) and says how to install one.
 * Priced by the PDF area: the engine itself costs nothing per call.
 */
export default defineVendor({
  name: 'chromium',
  embedded: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      executable_path: Type.String({
        default: '',
        description:
          'The Chromium or Chrome binary; empty: CHROME_PATH, else chromium, chromium-browser, '
          + 'google-chrome or google-chrome-stable in /usr/bin or on PATH. A path given must exist.',
      }),
      concurrency: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'Documents rendered at once.' }),
      timeout_seconds: Type.Number({
        minimum: 1,
        maximum: 600,
        default: 30,
        description:
          'Longest one render may take once it has its browser, loading the page and its resources included '
          + '(a launch is bounded apart: this, but never under 30 s).',
      }),
      recycle_after: Type.Integer({
        minimum: 0,
        default: 1000,
        description: 'Restart the browser after this many documents, to bound its memory; 0: never.',
      }),
      group_nice: Type.Integer({
        minimum: 0,
        maximum: 19,
        default: 0,
        description:
          "The nice of the browser's scheduling group on Linux with autogroups (the browser runs in a session "
          + 'of its own): higher keeps renders further from the requests, and slower when other sessions are '
          + 'busy too; 0 leaves it.',
      }),
      args: Type.Array(Type.String(), {
        default: [],
        description: 'Extra Chromium command-line flags, after the built-in ones.',
      }),
    },
    { additionalProperties: false, default: {} }
  ),
  create(config, ctx): VendorInstance {
    const executablePath = config.executable_path ? checkChromium(config.executable_path) : findChromium();
    if (!executablePath) {
      ctx.log.warn(
        'no Chromium found: PDF rendering is off. Install it (Debian/Ubuntu: apt-get install -y chromium) '
          + "or set CHROME_PATH or the chromium vendor's executable_path."
      );
      return { capabilities: {} };
    }
    const engine = new ChromiumEngine({
      executablePath,
      launcherDir: join(ctx.dataDir, 'chromium'),
      groupNice: config.group_nice,
      proxy: ctx.egressProxy,
      args: config.args,
      recycleAfter: config.recycle_after,
      concurrency: config.concurrency,
      timeoutMs: config.timeout_seconds * 1000,
    });
    const render: ImplOf<Caps['pdf.render']> = {
      invoke: (input: PdfRenderInput, { signal, accountId }) => engine.render(input, signal, accountId),
    };
    return {
      capabilities: { 'pdf.render': render },
      // Healthy while the binary is there. Launching it would be the full proof, but takes
      // seconds on a busy machine, past what `doctor` gives a check; the first render launches it.
      async health() {
        try {
          checkChromium(executablePath);
          return { ok: true };
        } catch (e) {
          return { ok: false, error: (e as Error).message };
        }
      },
      close: () => engine.close(),
    };
  },
});
