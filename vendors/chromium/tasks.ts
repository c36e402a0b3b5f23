// What the Chromium engine runs in its worker thread (core/isolation/worker-pool.ts): counting a
// printed document's pages means parsing it with pdf-lib, a few milliseconds a document and a
// module of some 800 ms to load, which on the event loop held every other account's requests
// while a render finished (bench/stall's chromium-render). Loaded by path in the thread, never
// imported by the engine itself (only its types).

export const tasks = {
  /** Pages of a PDF Chromium printed. */
  pages: async (data: Buffer): Promise<number> => {
    const { PDFDocument } = await import('pdf-lib');
    return (await PDFDocument.load(data, { updateMetadata: false })).getPageCount();
  },
};
