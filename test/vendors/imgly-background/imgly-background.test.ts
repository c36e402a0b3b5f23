// long-pole: the ONNX model; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { vendorContext } from '../../helpers/vendor-context.js';
import pino from 'pino';
import imglyVendor, { imglyBackground } from '../../../vendors/imgly-background/index.js';
import { libraryInstalled } from '../../../vendors/imgly-background/library.js';
import { pngBomb } from '../../fakes/test-images.js';

// The engine without inference: its input checks run before the model is loaded. The model
// itself runs in one test file, test/plugins/image/remove-background-local.test.ts.

const ctx = vendorContext('imgly-background');
const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 300_000 });

t.test('a bad input is the caller’s (422/413 client_error), found before the model runs', async (t) => {
  const inst = await imglyVendor.create({ model: 'medium', timeout_seconds: 300 }, ctx);
  t.teardown(() => inst.close?.());
  const impl = inst.capabilities['image.remove_background'];
  await t.rejects(impl.invoke({ data: Buffer.from('not an image') }, opts()), { kind: 'client_error', status: 422 });
  await t.rejects(impl.invoke({ data: pngBomb() }, opts()), { kind: 'client_error', status: 413 });
});

t.test('no config: the schema defaults make a valid embedded instance', async (t) => {
  t.equal(imglyVendor.embedded, true);
  const { Value } = await import('@sinclair/typebox/value');
  t.same(Value.Default(imglyVendor.configSchema, {}), {
    model: 'medium',
    timeout_seconds: 120,
    max_waiting_per_account: 4,
  });
  const inst = await imglyVendor.create({ model: 'medium', timeout_seconds: 120 }, ctx);
  t.teardown(() => inst.close?.());
  const impl = inst.capabilities['image.remove_background'];
  t.equal((impl as { price?: unknown }).price, undefined, 'no price() of its own: the image area prices it');
});

t.test('without its library installed it serves nothing and the log says how to install it', async (t) => {
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
  const inst = await imglyBackground(() => false).create({ model: 'medium', timeout_seconds: 120 }, { ...ctx, log });
  t.same(inst.capabilities, {});
  t.match(
    lines.join(''),
    /@imgly\/background-removal-node is not installed.*npm install @imgly\/background-removal-node/
  );
});

t.test('libraryInstalled: the package resolves here; a resolver that fails means not installed', async (t) => {
  t.equal(libraryInstalled(), true, 'npm ci installs optional dependencies');
  t.equal(
    libraryInstalled(() => {
      throw Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' });
    }),
    false
  );
});

t.test(
  'its model files missing (a partial install): it serves nothing, the log says which and how to fix it',
  async (t) => {
    const { mkdtempSync, rmSync, writeFileSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { pathToFileURL } = await import('node:url');
    const { libraryLocation, modelMissing } = await import('../../../vendors/imgly-background/library.js');
    const real = libraryLocation();
    t.equal(modelMissing(real.publicPath, 'medium'), undefined, 'the installed package has its models');
    t.equal(modelMissing(real.publicPath, 'small'), undefined);
    const dir = mkdtempSync(join(tmpdir(), 'imgly-model-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const publicPath = `${pathToFileURL(dir).href}/`;
    t.match(modelMissing(publicPath, 'medium'), /model index .*resources\.json is missing/);
    // The index there, a chunk of the model not.
    writeFileSync(join(dir, 'resources.json'), readFileSync(new URL('resources.json', real.publicPath)));
    t.match(modelMissing(publicPath, 'small'), /a file of its "small" model \([0-9a-f]{64}\) is missing/);

    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
    const inst = await imglyBackground(
      () => true,
      () => ({ libraryUrl: real.libraryUrl, publicPath })
    ).create({ model: 'medium', timeout_seconds: 120 }, { ...ctx, log });
    t.same(inst.capabilities, {}, 'no capability: the router answers 503 no_vendor_available, not a 502 per call');
    t.match(lines.join(''), /is installed but a file of its \\"medium\\" model .* is missing.*npm install/);
  }
);
