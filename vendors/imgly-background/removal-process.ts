import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { VendorFailure } from '../../core/kit/vendor.js';
import { CHILD_SOURCE } from './child-source.js';

interface Reply {
  id?: number;
  ready?: true;
  busy?: true;
  fatal?: string;
  data?: Uint8Array;
  error?: string;
}

/**
 * The removal process: IMG.LY's library and ONNX Runtime in a child process of their own. The
 * library does its pre- and post-processing in JavaScript on the thread that calls it (tens of
 * seconds a call on a loaded machine), so in the gateway's process it held the event loop and
 * every other request waited. A child also makes a removal killable: past its deadline, or when
 * its caller is gone, the process is killed (its memory with it) and the next removal starts a
 * new one. One removal at a time per process; the caller queues. Emits `busy` (a removal
 * started in the child) and `exit`, for tests and logs.
 */
export class RemovalProcess extends EventEmitter {
  private child?: ChildProcess;
  private ready?: Promise<ChildProcess>;
  private seq = 0;

  constructor(
    private readonly libraryUrl: string,
    private readonly publicPath: string,
    private readonly model: string
  ) {
    super();
  }

  /** The running child's pid, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private start(): Promise<ChildProcess> {
    // Node's own flags only (not a test runner's loader): the child runs plain ESM. Its working
    // directory is irrelevant to it: everything it loads is named by an absolute URL.
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', CHILD_SOURCE, this.libraryUrl, this.publicPath, this.model],
      { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' }
    );
    this.child = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-2000)));
    child.once('exit', (code, sig) => {
      if (this.child === child) {
        this.child = undefined;
        this.ready = undefined;
      }
      this.emit('exit', { pid: child.pid, code, signal: sig, stderr });
    });
    this.ready = new Promise<ChildProcess>((resolve, reject) => {
      const onExit = () => reject(unavailable(`the removal process exited while starting: ${lastLine(stderr)}`));
      child.once('exit', onExit);
      child.once('message', (m: Reply) => {
        child.off('exit', onExit);
        if (m.ready) resolve(child);
        else reject(unavailable(`the removal process cannot load its library: ${m.fatal}`));
      });
    });
    // A start that fails is seen by the call that waits for it; nothing else is left unhandled.
    this.ready.catch(() => {});
    return this.ready;
  }

  /** The subject of `png` on a transparent background, as PNG; the child is killed on abort or after `timeoutMs`. */
  async run(png: Buffer, signal: AbortSignal, timeoutMs: number): Promise<Buffer> {
    signal.throwIfAborted();
    const child = await (this.ready ?? this.start());
    signal.throwIfAborted();
    const id = ++this.seq;
    return new Promise<Buffer>((resolve, reject) => {
      const done = (err: unknown, out?: Buffer) => {
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
      const timer = setTimeout(
        () => kill(new VendorFailure('timeout', `Background removal took over ${timeoutMs} ms; it was stopped.`)),
        timeoutMs
      );
      const onExit = (code: number | null, sig: string | null) =>
        done(unavailable(`the removal process ended (${sig ?? `exit code ${code}`}) during a removal`));
      const onMessage = (m: Reply) => {
        if (m.id !== id) return;
        if (m.busy) this.emit('busy', { pid: child.pid });
        else if (m.error !== undefined) done(unavailable(`the removal failed: ${m.error}`));
        else done(undefined, Buffer.from(m.data!.buffer, m.data!.byteOffset, m.data!.byteLength));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ id, png });
    });
  }

  /** Ends the child (a removal in it fails); the next run starts another. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

function unavailable(message: string): VendorFailure {
  return new VendorFailure('unavailable', `Background removal is unavailable: ${message}`);
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() || 'no output';
}
