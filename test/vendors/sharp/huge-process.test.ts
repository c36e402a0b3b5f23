import t from 'tap';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import sharp from 'sharp';
import sharpVendor from '../../../vendors/sharp/index.js';
import { HugeProcesses } from '../../../vendors/sharp/huge-process.js';
import { HUGE_INPUT_PIXELS } from '../../../vendors/sharp/engine.js';
import { BACKGROUND_NICE } from '../../../core/isolation/background-priority.js';
import type { ImageProcessOutput } from '../../../core/capabilities/image.js';
import { vendorContext } from '../../helpers/vendor-context.js';

// database-independent: huge images are processed in niced child processes, not in the gateway's.

/** A noisy 20-MP JPEG: past the small lane's bytes, and its header past HUGE_INPUT_PIXELS. */
const huge = sharp({
  create: {
    width: 5000,
    height: 4000,
    channels: 3,
    background: '#888',
    noise: { type: 'gaussian', mean: 128, sigma: 40 },
  },
})
  .jpeg({ quality: 70 })
  .toBuffer();

const exited = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

t.test('a huge image is resized in a child process below the gateway priority', async (t) => {
  t.ok(5000 * 4000 > HUGE_INPUT_PIXELS);
  const procs = new HugeProcesses();
  t.teardown(() => procs.close());
  const out = await procs.run(
    {
      data: await huge,
      operations: [
        { op: 'resize', width: 500 },
        { op: 'convert', format: 'webp' },
      ],
    },
    new AbortController().signal,
    Date.now() + 60_000
  );
  t.match(out, { format: 'webp', width: 500, height: 400 });
  t.ok(Buffer.isBuffer(out.data));
  t.match((await sharp(out.data).metadata()).format, 'webp', 'the bytes are the image the answer says');
  const [pid] = procs.pids();
  t.ok(pid && pid !== process.pid, 'a process of its own, kept for the next image');
  t.equal(getPriority(pid), BACKGROUND_NICE, 'niced (the threads libvips starts inherit it)');
});

t.test("the caller's errors keep their kind and status; an abort kills the process", async (t) => {
  const procs = new HugeProcesses();
  t.teardown(() => procs.close());
  const bad = await procs
    .run(
      { data: await huge, operations: [{ op: 'resize', width: 200_000 }] },
      new AbortController().signal,
      Date.now() + 60_000
    )
    .catch((e) => e);
  t.match(bad, { name: 'VendorFailure', kind: 'client_error', status: 413 }, 'an output over the cap: 413');
  const ac = new AbortController();
  const data = await huge;
  const busy = once(procs, 'busy');
  const running = procs.run({ data, operations: [{ op: 'rotate', angle: 33 }] }, ac.signal, Date.now() + 60_000);
  const [{ pid }] = await busy;
  ac.abort(new Error('caller gone'));
  await t.rejects(running, /caller gone/);
  await new Promise<void>((resolve) => {
    const check = () => (exited(pid) ? resolve() : setTimeout(check, 20));
    check();
  });
  t.pass('the process of an abandoned call is ended');
});

t.test('the vendor sends huge inputs to the child and answers the same image', async (t) => {
  const inst = await sharpVendor.create({ concurrency: 2, max_waiting_per_account: 64 }, vendorContext('sharp'));
  t.teardown(() => inst.close?.());
  const out = (await inst.capabilities['image.process'].invoke(
    { data: await huge, operations: [{ op: 'resize', width: 1000 }] },
    { signal: new AbortController().signal, deadline: Date.now() + 60_000 }
  )) as ImageProcessOutput;
  t.match(out, { format: 'jpeg', width: 1000, height: 800 });
  t.ok(hugeChildren().length > 0, 'a huge-image process of this one holds the decode (kept for the next)');
});

/** Child processes of this one running the huge-image task (Linux /proc). */
function hugeChildren(): number[] {
  const tasks = readdirSync('/proc/self/task');
  const kids = tasks.flatMap((tid) =>
    readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)
  );
  return kids.map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('vendors/sharp/huge-task');
    } catch {
      return false;
    }
  });
}
