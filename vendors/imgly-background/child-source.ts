import { BACKGROUND_NICE } from '../../core/kit/vendor.js';

/**
 * The code of the removal process, run with `node --input-type=module -e CHILD_SOURCE <library
 * URL> <model dir URL> <model>`: plain ESM, so it runs the same from the sources (tsx) and the
 * bundle. The library and its model are named by absolute file URLs the parent resolved, never
 * looked up from the working directory (the library's default is `process.cwd()`-relative).
 * One image at a time: a request `{ id, png }` is answered `{ id, data }` or `{ id, error }`.
 * The session the library memoizes by config lives as long as the process, so the model is
 * read once; the parent kills the process to end a removal, and the next call starts another.
 */
export const CHILD_SOURCE = `
import { setPriority } from 'node:os';
// Below the gateway's event loop, and so every thread ONNX Runtime starts from here.
try { setPriority(${BACKGROUND_NICE}); } catch {}
const [libraryUrl, publicPath, model] = process.argv.slice(1);
const config = { model, publicPath, output: { format: 'image/png' } };
process.on('disconnect', () => process.exit(0));
let lib;
try {
  lib = await import(libraryUrl);
} catch (e) {
  process.send({ fatal: String(e && e.message || e) });
  process.exit(1);
}
process.on('message', async (m) => {
  process.send({ id: m.id, busy: true });
  try {
    const out = await lib.removeBackground(new Blob([m.png], { type: 'image/png' }), config);
    process.send({ id: m.id, data: new Uint8Array(await out.arrayBuffer()) });
  } catch (e) {
    process.send({ id: m.id, error: String(e && e.message || e) });
  }
});
process.send({ ready: true });
`;
