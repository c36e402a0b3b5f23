import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { BACKGROUND_NICE } from '../../core/kit/vendor.js';

const require = createRequire(import.meta.url);

/**
 * The script of a Tesseract worker thread, as the `workerPath` tesseract.js starts it from: its
 * own Node worker script, after the thread is put at BACKGROUND_NICE. tesseract.js makes the
 * thread from the event loop's thread, which runs at nice 0, and a thread inherits its maker's
 * nice: a page's recognition (seconds of wasm) took an equal share of the cores from every cheap
 * request (bench/stall's ocr target, 4.4x the idle p99). A `data:` URL rather than a file next
 * to this one for pdf-worker-source.ts's reasons (`.ts` under tsx, no such file beside the
 * bundled CLI's chunks). tesseract.js hands `workerPath` to `new Worker` untouched, which takes
 * a URL object (not a `data:` string).
 */
export function tesseractWorkerUrl(): URL {
  const script = pathToFileURL(require.resolve('tesseract.js/src/worker-script/node/index.js')).href;
  const source = `
import { setPriority } from 'node:os';
try { setPriority(${BACKGROUND_NICE}); } catch {}
await import(${JSON.stringify(script)});
`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}
