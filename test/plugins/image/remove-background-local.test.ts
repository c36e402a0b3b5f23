// long-pole: the ONNX model; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import sharp from 'sharp';
import { alphaAt, subjectOnFlat } from '../../fakes/test-images.js';
import { REMOVE_BG_KEY, removeBgFake } from '../../fakes/remove-bg-fake.js';
import { imageApp } from './setup.js';

// database-independent: the ONNX engine's work; the charge and failover are the router's, tested on both.

// The one test file that runs the real model (its load takes seconds to tens of seconds): a
// failover from remove.bg, down, to the embedded engine, through the HTTP API. The engine's
// other behaviour needs no inference and is in test/vendors/imgly-background/.

// The model's first load: minutes on a busy 2-core machine, past tap's 120 s for a file.
t.setTimeout(900_000);

t.test('remove.bg down (500): the embedded engine cuts the disc out, charged once', async (t) => {
  const fake = await removeBgFake(t);
  const { post, balance, results } = await imageApp(t, {
    // The first removal loads the model: minutes are allowed on a loaded test machine, by the
    // area's deadline and by the engine's own (120 s by default: it ran out at load 20).
    vendors: [
      { id: 'rbg', use: 'remove-bg', config: { api_key: REMOVE_BG_KEY, base_url: fake.baseUrl } },
      { id: 'imgly-background', use: 'imgly-background', config: { timeout_seconds: 600 } },
    ],
    plugins: { image: { timeout_seconds: 600 } },
  });
  fake.failNext(500);
  const before = await balance();
  const res = await post('/v1/image/process', {
    input: { base64: (await subjectOnFlat(320)).toString('base64') },
    operations: [{ op: 'remove_background' }],
  });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.headers['x-svc-vendor'], 'imgly-background');
  t.equal(fake.requests.length, 1, 'remove.bg was tried first');
  t.equal(before - (await balance()), 10_000, 'the default remove_background price, once');
  t.equal(await results(), 1);
  t.match(res.json(), { mime: 'image/png', width: 320, height: 320 });
  const out = Buffer.from(await (await fetch(res.json().image_url)).arrayBuffer());
  t.match(await sharp(out).metadata(), { format: 'png', width: 320, height: 320, hasAlpha: true });
  for (const [x, y] of [
    [5, 5],
    [314, 5],
    [5, 314],
    [314, 314],
    [160, 20],
  ]) {
    t.ok((await alphaAt(out, x, y)) < 40, `background at ${x},${y} is transparent-ish`);
  }
  for (const [x, y] of [
    [160, 160],
    [130, 160],
    [190, 160],
    [160, 130],
  ]) {
    t.ok((await alphaAt(out, x, y)) > 215, `the disc at ${x},${y} is kept opaque`);
  }
});
