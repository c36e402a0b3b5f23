import t from 'tap';
import { vendorContext } from '../../helpers/vendor-context.js';
import imglyVendor from '../../../vendors/imgly-background/index.js';
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
