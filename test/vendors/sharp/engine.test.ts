import { availableParallelism } from 'node:os';
import t from 'tap';
import sharp from 'sharp';
import { pngBomb } from '../../fakes/test-images.js';
import { SharpEngine } from '../../../vendors/sharp/engine.js';
import { until } from '../../helpers/wait.js';

// The queue that bounds how many images are worked on at once.

t.test('at most `concurrency` images at once; the next starts when one is done', async (t) => {
  const engine = new SharpEngine(2);
  const signal = new AbortController().signal;
  let running = 0;
  let peak = 0;
  const gates: Array<() => void> = [];
  const work = () =>
    engine.run({ signal }, 'large', async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
      return 'done';
    });
  const calls = [work(), work(), work(), work()];
  await until('two started', () => gates.length === 2);
  t.equal(running, 2, 'two run, two wait');
  gates.shift()!();
  await until('a waiting one to start', () => gates.length === 2);
  t.equal(running, 2, 'a waiting one took the free slot');
  for (let done = 0; done < 3; done++) {
    await until('a gate', () => gates.length > 0);
    gates.shift()!();
  }
  t.same(await Promise.all(calls), ['done', 'done', 'done', 'done']);
  t.equal(peak, 2);
});

t.test('a call whose caller went away while it waited never starts', async (t) => {
  const engine = new SharpEngine(1);
  let release!: () => void;
  const first = engine.run(
    { signal: new AbortController().signal },
    'large',
    () => new Promise<void>((r) => (release = r))
  );
  const gone = new AbortController();
  let started = false;
  const second = engine.run({ signal: gone.signal }, 'large', async () => {
    started = true;
  });
  await until('the first to start', () => release !== undefined);
  gone.abort(new Error('client went away'));
  await t.rejects(second);
  release();
  await first;
  t.notOk(started, 'the waiting work was dropped');
});

t.test('a small input does not wait behind large ones that hold every slot', async (t) => {
  const engine = new SharpEngine(1);
  let release!: () => void;
  const large = engine.run(
    { signal: new AbortController().signal },
    'large',
    () => new Promise<void>((r) => (release = r))
  );
  const queued = engine.run({ signal: new AbortController().signal }, 'large', async () => 'large 2');
  await until('the large one to start', () => release !== undefined);
  t.equal(
    await engine.run({ signal: new AbortController().signal }, 'small', async () => 'small'),
    'small',
    'ran while the lane was full'
  );
  release();
  t.same(await Promise.all([large, queued]), [undefined, 'large 2']);
});

t.test("a bug in the gateway's own code stays a TypeError (500), not the caller's 422", async (t) => {
  const engine = new SharpEngine(1);
  await t.rejects(
    engine.run({ signal: new AbortController().signal }, 'large', async () => {
      throw new TypeError('x is not a function');
    }),
    TypeError
  );
  await t.rejects(
    engine.run({ signal: new AbortController().signal }, 'large', async () => {
      throw new Error('Input buffer contains unsupported image format');
    }),
    { name: 'VendorFailure', kind: 'client_error', status: 422 }
  );
});

t.test('huge inputs (by the pixels their header declares) get a core fewer than the large lane', async (t) => {
  const engine = new SharpEngine(2);
  t.teardown(() => engine.close());
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
    .png()
    .toBuffer();
  t.equal(await engine.laneOf(png), 'small');
  const pad = Buffer.alloc(600 * 1024);
  // Past the small lane's bytes; what decides is the header: 20 MP against 64 pixels.
  const flat = await sharp({ create: { width: 5000, height: 4000, channels: 3, background: '#000' } })
    .png({ compressionLevel: 9 })
    .toBuffer();
  t.equal(await engine.laneOf(Buffer.concat([flat, pad])), 'huge');
  t.equal(
    await engine.laneOf(Buffer.concat([pngBomb(), pad])),
    'small',
    'over the pixel cap: the small lane, where the probe refuses it at once'
  );
  t.equal(await engine.laneOf(Buffer.concat([png, pad])), 'large');
  t.equal(
    await engine.laneOf(Buffer.concat([Buffer.from('not an image'), pad])),
    'small',
    'not an image by its signature: the small lane, where the probe refuses it before any decoder'
  );

  const slots = Math.max(1, Math.min(2, availableParallelism() - 1));
  let running = 0;
  let peak = 0;
  const gates: Array<() => void> = [];
  const signal = new AbortController().signal;
  const calls = [0, 1, 2].map(() =>
    engine.run({ signal }, 'huge', async () => {
      peak = Math.max(peak, ++running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
    })
  );
  await until('the lane to fill', () => gates.length === slots);
  t.equal(running, slots, `${slots} at once on ${availableParallelism()} cores`);
  for (let done = 0; done < 3; done++) {
    await until('a gate', () => gates.length > 0);
    gates.shift()!();
  }
  await Promise.all(calls);
  t.equal(peak, slots);
});

t.test(
  "every pipeline of a call carries the call's deadline; libvips ending one is a timeout, not a 422",
  async (t) => {
    const engine = new SharpEngine(1);
    t.teardown(() => engine.close());
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    const signal = new AbortController().signal;
    // sharp keeps the option on the instance: what libvips is given when the pipeline runs.
    const seconds = (s: unknown) => (s as { options: { timeoutSeconds: number } }).options.timeoutSeconds;
    const bounded = await engine.run({ signal, deadline: Date.now() + 60_000 }, 'small', async (s) => [
      seconds(s(png)),
      seconds(s({ create: { width: 2, height: 2, channels: 3, background: '#fff' } })),
    ]);
    for (const v of bounded) t.ok(v > 30 && v <= 60, `the remaining seconds of the call, ${v}`);
    t.equal(await engine.run({ signal }, 'small', async (s) => seconds(s(png))), 0, 'no deadline: unbounded');
    await t.rejects(
      engine.run({ signal }, 'small', async () => {
        throw new Error('timeout: 42% complete');
      }),
      { name: 'VendorFailure', kind: 'timeout' }
    );
  }
);
