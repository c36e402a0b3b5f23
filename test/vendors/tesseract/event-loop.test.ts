import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { readPdf } from '../../../vendors/tesseract/ocr.js';
import { LanguageData } from '../../../vendors/tesseract/languages.js';
import { PdfWorkers } from '../../../vendors/tesseract/pdf-workers.js';
import type { Recognizer } from '../../../vendors/tesseract/recognizer.js';
import { pdfOf, scannedA4 } from '../../fakes/ocr-pdfs.js';

// Issue 15: one tenant's OCR must not stall other tenants' requests. pdfjs opening a scanned
// A4 page and decoding its picture held the event loop in one go when it ran on the main
// thread: 1.2-1.5 s of a 1.4-1.8 s page (over 80 %) on the loaded 2-core test machine, ~0.4 s
// on an idle one. In the PDF worker the main thread only posts the bytes and receives the drawn
// page: the longest stall measured 90-250 ms of 1.5-3.2 s there, scheduling noise of a machine
// with a load of 19, under 10 %. So the bound is a share of the page's own time, which stretches
// with the machine's load as both stalls do. The recognizer here draws the page and reads
// nothing (Tesseract runs in threads of its own anyway).

/** The longest the event loop may be held, as a share of the time the page took. */
const MAX_SHARE = 0.25;

t.test('a scanned A4 page is opened and drawn off the event loop', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ocr-loop-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const languages = new LanguageData(dir);
  const pdf = new PdfWorkers(1, pino({ level: 'silent' }));
  t.teardown(() => pdf.close());
  const drawn: number[] = [];
  const recognizer = {
    async recognize(draw: () => Promise<Buffer>) {
      drawn.push((await draw()).length);
      return 'read';
    },
  } as unknown as Recognizer;
  const live = new AbortController().signal;
  const settings = { dpi: 150, maxPages: 1 };
  // The thread made and pdfjs loaded first: a one-off per process, measured apart.
  await readPdf(
    { data: await pdfOf([{ text: 'warm up' }]), languages: [] },
    settings,
    languages,
    pdf,
    recognizer,
    live
  );
  const data = await scannedA4();

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const out = await readPdf({ data, languages: [] }, settings, languages, pdf, recognizer, live);
  const took = performance.now() - started;
  delay.disable();

  t.same(out.pages, [{ text: 'read', source: 'ocr' }]);
  t.equal(drawn.length, 1, 'the page was drawn');
  t.ok(drawn[0]! > 100_000, 'a real page, not a blank');
  // A page this long to draw is one whose stall the event-loop monitor (10 ms ticks) can see.
  t.ok(took > 200, `the page took ${Math.round(took)} ms to open and draw`);
  const longest = delay.max / 1e6;
  t.ok(
    longest < took * MAX_SHARE,
    `the event loop was held ${Math.round(longest)} ms at most, under ${MAX_SHARE * 100} % of ${Math.round(took)} ms`
  );
});
