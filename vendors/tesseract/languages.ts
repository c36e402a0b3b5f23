import { createRequire } from 'node:module';
import { access, mkdir, readdir, readFile, rename, symlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { dirname, join } from 'node:path';
import { VendorFailure } from '../../core/kit/vendor.js';
import { refused } from './refused.js';

const require = createRequire(import.meta.url);
const SCOPE = '@tesseract.js-data';

/** Tesseract's codes: `eng`, `chi_sim`, `chi_tra_vert`; anything else could name a path. */
const CODE = /^[a-z]{3}(_[a-z]+)*$/;

/**
 * Where a data package keeps its traineddata, best first: the LSTM-only integer model
 * (what tesseract.js itself downloads for its default engine: smaller, faster to load), then
 * the full model the package's `index.js` points at. gzip or not, tesseract.js tells by the bytes.
 */
const LAYOUTS = ['4.0.0_best_int', '4.0.0'];

/**
 * The language data of `@tesseract.js-data/<code>` packages, installed with npm: nothing is
 * downloaded. tesseract.js reads every language from one folder (`langPath`), and each
 * package keeps its file in a folder of its own, so the files are linked side by side in a
 * folder under the data dir, once a process for each language.
 */
export class LanguageData {
  private readonly linked = new Map<string, Promise<void>>();

  constructor(readonly folder: string) {}

  /** The `langPath` holding every language in `codes`; a code with no data package is the caller's error. */
  async prepare(codes: string[]): Promise<string> {
    for (const code of codes) {
      if (!CODE.test(code)) throw await unknown(code);
    }
    await Promise.all(codes.map((code) => this.link(code)));
    return this.folder;
  }

  private link(code: string): Promise<void> {
    let done = this.linked.get(code);
    if (!done) {
      done = linkInto(this.folder, code);
      // A failure is not remembered: the package may be installed before the next call.
      done.catch(() => this.linked.delete(code));
      this.linked.set(code, done);
    }
    return done;
  }
}

async function linkInto(folder: string, code: string): Promise<void> {
  const source = await traineddata(code);
  await checkModel(code, source);
  await mkdir(folder, { recursive: true });
  // tesseract.js asks for `<code>.traineddata.gz`; a fresh link renamed over the old one, so
  // two processes sharing the data dir never see a half-made link.
  const target = join(folder, `${code}.traineddata.gz`);
  const temp = `${target}.${process.pid}.${Date.now()}`;
  await symlink(source, temp);
  await rename(temp, target);
}

/** The file holding `code`'s model in its data package; the caller's error when none is installed. */
export async function traineddata(code: string): Promise<string> {
  let root: string;
  try {
    root = dirname(require.resolve(`${SCOPE}/${code}/package.json`));
  } catch {
    throw await unknown(code);
  }
  for (const layout of LAYOUTS) {
    for (const name of [`${code}.traineddata.gz`, `${code}.traineddata`]) {
      const file = join(root, layout, name);
      if (await exists(file)) return file;
    }
  }
  throw new Error(`${SCOPE}/${code} is installed but holds no ${code}.traineddata under ${LAYOUTS.join(' or ')}.`);
}

/**
 * A file Tesseract cannot initialise from is refused here, not handed to tesseract.js: on a
 * failed initialisation its worker answers twice, and the second answer throws in the main
 * thread where nothing catches it (the process would exit). A model starts with its count of
 * components (int32) and where each starts (int64, little-endian; -1 when absent).
 */
export async function checkModel(code: string, file: string): Promise<void> {
  let data = await readFile(file);
  if (data[0] === 0x1f && data[1] === 0x8b) data = await promisify(gunzip)(data).catch(() => Buffer.alloc(0));
  const count = data.length >= 4 ? data.readInt32LE(0) : 0;
  const header = 4 + 8 * count;
  let present = 0;
  let ok = count > 0 && count < 1000 && data.length >= header;
  for (let i = 0; ok && i < count; i++) {
    const start = Number(data.readBigInt64LE(4 + 8 * i));
    if (start !== -1) present++;
    ok = start === -1 || (start >= header && start < data.length);
  }
  if (!ok || !present) {
    throw new VendorFailure('unavailable', `The OCR language data for ${code} (${file}) is not a Tesseract model.`);
  }
}

/** The codes of the data packages Node would find from here. */
export async function installedLanguages(): Promise<string[]> {
  const found = new Set<string>();
  for (const base of require.resolve.paths(`${SCOPE}/eng`) ?? []) {
    const names = await readdir(join(base, SCOPE)).catch(() => [] as string[]);
    for (const name of names) if (CODE.test(name)) found.add(name);
  }
  return [...found].sort();
}

async function unknown(code: string): Promise<VendorFailure> {
  const installed = await installedLanguages();
  const have = installed.length ? installed.join(', ') : 'none';
  const shown = JSON.stringify(code.slice(0, 40));
  return refused(
    `No OCR language data for ${shown}; installed: ${have}. `
      + `The operator adds a language with \`npm install ${SCOPE}/<code>\` (Tesseract codes: eng, deu, fra, chi_sim…).`
  );
}

function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false
  );
}
