import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Recognizer } from '../../../vendors/tesseract/recognizer.js';
import { LanguageData } from '../../../vendors/tesseract/languages.js';
import { scanPng } from '../../fakes/ocr-pdfs.js';
import { settlesAtOnce, until } from '../../helpers/wait.js';
import { threadNices } from '../../helpers/nice.js';
import { BACKGROUND_NICE } from '../../../core/isolation/background-priority.js';

// The pool of Tesseract workers: how many pages at once, and a caller going away mid-page.

const log = pino({ level: 'silent' });

async function langPath(t: Tap): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ocr-pool-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return new LanguageData(dir).prepare(['eng']);
}
type Tap = typeof t;

t.test('at most `concurrency` pages drawn and recognised at once', async (t) => {
  const pool = new Recognizer(2, log);
  t.teardown(() => pool.close());
  const live = new AbortController().signal;
  let running = 0;
  let peak = 0;
  const gates: Array<() => void> = [];
  // Each draw fails once let go, so no worker is made: the slots are what is measured.
  const draw = async (): Promise<Buffer> => {
    running++;
    peak = Math.max(peak, running);
    await new Promise<void>((resolve) => gates.push(resolve));
    running--;
    throw new Error('drawn');
  };
  const pages = [1, 2, 3, 4].map(() =>
    pool.recognize(draw, 'eng', '/nowhere', live).then(String, (e: Error) => e.message)
  );
  await until('two pages drawing', () => gates.length === 2);
  t.equal(running, 2, 'two drawing, two waiting');
  for (let done = 0; done < 4; done++) {
    await until('a page drawing', () => gates.length > 0);
    gates.shift()!();
  }
  t.same(await Promise.all(pages), ['drawn', 'drawn', 'drawn', 'drawn'], 'each failed as its draw did');
  t.equal(peak, 2);
});

t.test('a caller gone mid-page: rejected at once with its reason; the next page gets a fresh worker', async (t) => {
  const pool = new Recognizer(1, log);
  t.teardown(() => pool.close());
  const path = await langPath(t);
  const png = await scanPng('ABORTED PAGE');
  const gone = new AbortController();
  const reason = new Error('client went away');
  let atOnce: Promise<boolean> | undefined;
  const page: Promise<string> = pool.recognize(
    async () => {
      // Gone while the worker loads its model and reads: the work Tesseract cannot be asked to stop.
      setImmediate(() => {
        gone.abort(reason);
        atOnce = settlesAtOnce(page);
      });
      return png;
    },
    'eng',
    path,
    gone.signal
  );
  await t.rejects(page, reason);
  t.equal(await atOnce, true, 'did not wait for the page to finish');
  const next = await pool.recognize(async () => scanPng('FRESH WORKER'), 'eng', path, new AbortController().signal);
  t.equal(next.trim().toUpperCase(), 'FRESH WORKER');
});

t.test('closed: waiting pages dropped, no new worker made', async (t) => {
  const pool = new Recognizer(1, log);
  await pool.close();
  await t.rejects(
    pool.recognize(async () => scanPng('LATE'), 'eng', await langPath(t), new AbortController().signal),
    /closed/
  );
});

t.test('a worker idle for idleMs is ended (its model leaves the heap); the next page makes another', async (t) => {
  const pool = new Recognizer(1, log, 50);
  t.teardown(() => pool.close());
  const path = await langPath(t);
  const live = new AbortController().signal;
  t.match(await pool.recognize(async () => scanPng('IDLE ONE'), 'eng', path, live), /IDLE ONE/);
  await until('the idle worker ended', () => pool.workers === 0);
  t.match(await pool.recognize(async () => scanPng('IDLE TWO'), 'eng', path, live), /IDLE TWO/);
  t.equal(pool.workers, 1, 'made again for the next page');
});

t.test('a worker thread runs below the event loop: at the background nice', async (t) => {
  const pool = new Recognizer(1, log);
  t.teardown(() => pool.close());
  const path = await langPath(t);
  // Drawn first: sharp's own threads, made on the event loop's thread, are not the worker's.
  const png = await scanPng('LOW PRIORITY');
  const before = threadNices();
  const text = await pool.recognize(async () => png, 'eng', path, new AbortController().signal);
  t.match(text, /LOW PRIORITY/);
  t.equal(pool.workers, 1, 'the worker is kept after the page');
  // The threads made meanwhile: the worker's, and under tap a loader thread of its own at nice 0.
  const made = [...threadNices()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);
  t.ok(made.includes(BACKGROUND_NICE), 'a thread made for the page at the background nice: the worker');
  t.equal(threadNices().get(process.pid), 0, 'the event loop as it was');
});
