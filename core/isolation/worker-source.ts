// The code of a pool's worker thread, run with `new Worker(WORKER_SOURCE, { eval: true })`. Inline
// rather than a file beside this one: the bundled CLI (scripts/bundle-cli.mjs) has no such file
// next to its chunks, and under tsx the file would be `.ts`, which an eval'd worker does not load
// by itself (local-storage's MD5 worker and tesseract's PDF workers are inline for the same
// reasons). What it runs is a task module found on disk (task-module.ts): `workerData.module`,
// loaded through tsx's loader when it is TypeScript (`workerData.tsx`, the tests from sources).
//
// Requests are `{ id, task, input }`, one at a time; each is told `{ id, started }` when the module
// is loaded and the task begins, then answered `{ id, value }` (buffers of
// the value moved, not copied) or `{ id, error: { name, message, stack, props } }`: an error's
// class does not survive postMessage, so its name and own fields travel and task-errors.ts
// rebuilds it. Uint8Arrays arrive as Buffers, as the task's types say. The thread runs below the
// event loop's CPU priority (background-priority.ts).

import { LOWER_PRIORITY_SOURCE } from './background-priority.js';

export const WORKER_SOURCE = `
'use strict';
${LOWER_PRIORITY_SOURCE}
const { parentPort, workerData } = require('node:worker_threads');
const loaded = (async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  const mod = await import(workerData.module);
  if (!mod.tasks || typeof mod.tasks !== 'object') throw new Error(workerData.module + ' exports no tasks');
  return mod.tasks;
})();

function revive(v, depth) {
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return v.map((x) => revive(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) out[k] = revive(x, depth + 1);
  return out;
}

/** ArrayBuffers the value owns whole: moved to the parent. A pooled Buffer's is shared, so copied. */
function owned(v, depth, into) {
  if (depth > 8 || v === null || typeof v !== 'object') return into;
  if (v instanceof Uint8Array) {
    if (v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && !into.includes(v.buffer)) into.push(v.buffer);
    return into;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) owned(x, depth + 1, into);
  return into;
}

function serialised(e) {
  const props = {};
  if (e && typeof e === 'object') {
    for (const k of Object.keys(e)) {
      try {
        props[k] = structuredClone(e[k]);
      } catch {}
    }
  }
  return { name: e?.name ?? 'Error', message: String(e?.message ?? e), stack: e?.stack, props };
}

parentPort.on('message', async (m) => {
  try {
    const tasks = await loaded;
    // The deadline counts from here: a thread's start and its module's load are not the task's.
    parentPort.postMessage({ id: m.id, started: true });
    const fn = tasks[m.task];
    if (typeof fn !== 'function') throw new Error('No task ' + m.task + ' in ' + workerData.module);
    const value = await fn(revive(m.input, 0));
    parentPort.postMessage({ id: m.id, value }, owned(value, 0, []));
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: serialised(e) });
  }
});
`;
