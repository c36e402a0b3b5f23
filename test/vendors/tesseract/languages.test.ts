import t from 'tap';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkModel, installedLanguages, LanguageData, traineddata } from '../../../vendors/tesseract/languages.js';

// Language data from the @tesseract.js-data packages: found, checked, linked into one folder.

async function scratch(t: Tap): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ocr-lang-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
type Tap = typeof t;

t.test('English is installed, its LSTM model preferred, linked where tesseract.js looks', async (t) => {
  t.ok((await installedLanguages()).includes('eng'));
  const file = await traineddata('eng');
  t.match(file, /@tesseract\.js-data\/eng\/4\.0\.0_best_int\/eng\.traineddata\.gz$/);
  const folder = join(await scratch(t), 'lang');
  t.equal(await new LanguageData(folder).prepare(['eng']), folder);
  t.equal(await readlink(join(folder, 'eng.traineddata.gz')), file);
});

t.test('a file that is not a Tesseract model is refused before tesseract.js sees it', async (t) => {
  const dir = await scratch(t);
  const cases: [string, Buffer][] = [
    ['text', Buffer.from('not a model')],
    ['gzipped text', gzipSync('not a model either')],
    ['truncated gzip', (await readFile(await traineddata('eng'))).subarray(0, 1000)],
    ['offsets past the end', Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.from('ffffff7f00000000', 'hex')])],
  ];
  for (const [what, bytes] of cases) {
    const file = join(dir, `${what}.traineddata.gz`);
    await writeFile(file, bytes);
    await t.rejects(
      checkModel('eng', file),
      { name: 'VendorFailure', kind: 'unavailable', message: /is not a Tesseract model/ },
      what
    );
  }
  await t.resolves(checkModel('eng', await traineddata('eng')), 'the real model passes');
});
