import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import {
  BACKGROUND_NICE,
  findTaskModule,
  tsxLoaderFor,
  VendorFailure,
  type ImageProcessInput,
  type ImageProcessOutput,
} from '../../core/kit/vendor.js';

/**
 * The code of a huge-image process, run with `node --input-type=module -e SOURCE <task module
 * URL> [tsx loader URL]`: plain ESM, so it runs the same from the sources (tsx) and the bundle.
 * Niced before libvips starts its threads, which inherit it. Requests `{ id, input, deadline }`,
 * answered `{ id, out }` or `{ id, error: { message, kind, status } }`.
 */
const SOURCE = `
import { setPriority } from 'node:os';
try { setPriority(${BACKGROUND_NICE}); } catch {}
const [moduleUrl, tsx] = process.argv.slice(1);
process.on('disconnect', () => process.exit(0));
if (tsx) (await import(tsx)).register();
const { runHuge } = await import(moduleUrl);
process.on('message', async (m) => {
  try {
    process.send({ id: m.id, out: await runHuge(m.input, m.deadline) });
  } catch (e) {
    process.send({ id: m.id, error: { message: String((e && e.message) || e), kind: e && e.kind, status: e && e.status } });
  }
});
process.send({ ready: true });
`;

interface Reply {
  id?: number;
  ready?: true;
  out?: ImageProcessOutput & { data: Uint8Array };
  error?: { message: string; kind?: string; status?: number };
}

/** An idle process is ended after this long: its memory (libvips' buffers, glibc's arenas) goes with it. */
const IDLE_MS = 10_000;

/**
 * Huge images (over HUGE_INPUT_PIXELS) decoded and processed in child processes below the
 * gateway's CPU priority, not on libvips threads in the gateway: there both cores decoding a
 * 40-MP JPEG made the event loop's requests wait (bench/stall `resize-40mp`), and the decode's
 * native memory stayed in the gateway's RSS after. One image at a time a process; the huge
 * lane bounds how many run. A call past its deadline, or whose caller is gone, has its process
 * killed; the next call starts another. Emits `busy` ({ pid }) when an image is sent to a process.
 */
export class HugeProcesses extends EventEmitter {
  private readonly idle: { child: ChildProcess; timer: NodeJS.Timeout }[] = [];
  private readonly all = new Set<ChildProcess>();
  private seq = 0;
  private readonly moduleUrl = findTaskModule(import.meta.url, 'vendors/sharp/huge-task');

  private start(): Promise<ChildProcess> {
    const tsx = tsxLoaderFor(this.moduleUrl);
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', SOURCE, this.moduleUrl, ...(tsx ? [tsx] : [])],
      { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' }
    );
    this.all.add(child);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-2000)));
    child.once('exit', () => {
      this.all.delete(child);
      const at = this.idle.findIndex((i) => i.child === child);
      if (at >= 0) clearTimeout(this.idle.splice(at, 1)[0].timer);
    });
    return new Promise<ChildProcess>((resolve, reject) => {
      const onExit = () => reject(unavailable(`it exited while starting: ${stderr.trim().split('\n').pop()}`));
      child.once('exit', onExit);
      child.once('message', (m: Reply) => {
        child.off('exit', onExit);
        if (m.ready) resolve(child);
      });
    });
  }

  private take(): Promise<ChildProcess> {
    const ready = this.idle.pop();
    if (!ready) return this.start();
    clearTimeout(ready.timer);
    return Promise.resolve(ready.child);
  }

  private give(child: ChildProcess): void {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), IDLE_MS);
    timer.unref();
    this.idle.push({ child, timer });
  }

  /** Process `input` in a child by `deadline`; the child is killed on abort or past the deadline. */
  async run(input: ImageProcessInput, signal: AbortSignal, deadline: number): Promise<ImageProcessOutput> {
    signal.throwIfAborted();
    const child = await this.take();
    if (signal.aborted) {
      this.give(child);
      signal.throwIfAborted();
    }
    const id = ++this.seq;
    return new Promise<ImageProcessOutput>((resolve, reject) => {
      const done = (err: unknown, out?: ImageProcessOutput) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(out!);
      };
      const kill = (err: unknown) => {
        child.kill('SIGKILL');
        done(err);
      };
      const onAbort = () => kill(signal.reason);
      // sharp stops the pipeline itself at the deadline (whole seconds): the kill is for a child that did not.
      const timer = setTimeout(
        () =>
          kill(new VendorFailure('timeout', 'The image took longer than the call allows; its processing was stopped.')),
        Math.max(0, deadline - Date.now()) + 2_000
      );
      const onExit = (code: number | null, sig: string | null) =>
        done(unavailable(`it ended (${sig ?? `exit code ${code}`}) during a call`));
      const onMessage = (m: Reply) => {
        if (m.id !== id) return;
        this.give(child);
        if (m.error) done(rebuilt(m.error));
        else
          done(undefined, {
            ...m.out!,
            data: Buffer.from(m.out!.data.buffer, m.out!.data.byteOffset, m.out!.data.byteLength),
          });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ id, input, deadline });
      this.emit('busy', { pid: child.pid });
    });
  }

  /** Pids of the running processes (tests). */
  pids(): number[] {
    return [...this.all].map((c) => c.pid!);
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.all].map((child) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return exited;
      })
    );
  }
}

/** The child's error as the gateway's: a VendorFailure keeps its kind and status. */
function rebuilt(e: { message: string; kind?: string; status?: number }): Error {
  if (e.kind) return new VendorFailure(e.kind as VendorFailure['kind'], e.message, { status: e.status });
  return unavailable(`it failed: ${e.message}`);
}

function unavailable(message: string): VendorFailure {
  return new VendorFailure('unavailable', `The huge-image process is unavailable: ${message}`);
}
