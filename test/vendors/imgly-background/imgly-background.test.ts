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
  t.same(Value.Default(imglyVendor.configSchema, {}), { model: 'medium', timeout_seconds: 120 });
  const inst = await imglyVendor.create({ model: 'medium', timeout_seconds: 120 }, ctx);
  t.teardown(() => inst.close?.());
  const impl = inst.capabilities['image.remove_background'];
  t.equal(impl.price({ data: Buffer.alloc(0) }, undefined, { price: 10_000 }), 10_000, 'priced by the area plan');
  t.equal(impl.price({ data: Buffer.alloc(0) }), 0, 'free without one');
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
