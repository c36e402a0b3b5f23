import t from 'tap';
import { vendorContext } from '../../helpers/vendor-context.js';
import sharp from 'sharp';
import imglyVendor from '../../../vendors/imgly-background/index.js';
import type { ImageProcessOutput } from '../../../core/capabilities/image.js';
import { alphaAt, pngBomb, subjectOnFlat } from '../../fakes/test-images.js';

// The real model, loaded once for this file (seconds to tens of seconds on a busy machine):
// one removal on a real image, the rest of the file checks what needs no inference.

const ctx = vendorContext('imgly-background');
const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 300_000 });

t.test('a disc on a flat background: PNG with alpha, background transparent, the disc kept', async (t) => {
  const inst = await imglyVendor.create({ model: 'medium', timeout_seconds: 300 }, ctx);
  t.teardown(() => inst.close?.());
  const impl = inst.capabilities['image.remove_background'];
  const input = await subjectOnFlat(320);
  const out = (await impl.invoke({ data: input }, opts())) as ImageProcessOutput;
  t.match(out, { format: 'png', mime: 'image/png', width: 320, height: 320 });
  const meta = await sharp(out.data).metadata();
  t.match(meta, { format: 'png', width: 320, height: 320, hasAlpha: true });
  for (const [x, y] of [
    [5, 5],
    [314, 5],
    [5, 314],
    [314, 314],
    [160, 20],
  ]) {
    t.ok((await alphaAt(out.data, x, y)) < 40, `background at ${x},${y} is transparent-ish`);
  }
  for (const [x, y] of [
    [160, 160],
    [130, 160],
    [190, 160],
    [160, 130],
  ]) {
    t.ok((await alphaAt(out.data, x, y)) > 215, `the disc at ${x},${y} is kept opaque`);
  }
  t.equal(impl.price({ data: input }, out, { price: 10_000 }), 10_000, 'priced by the area plan');
});

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
});
