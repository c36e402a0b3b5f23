import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { BACKGROUND_NICE, VendorFailure, isExecutable, onPath } from '../../core/kit/vendor.js';

/** `ffmpeg` on PATH (or /usr/bin when PATH is unset); undefined when there is none. */
export function findFfmpeg(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return onPath(['ffmpeg'], env);
}

/** An operator-given path must exist: a typo is a boot error, not a silent "no video". */
export function checkFfmpeg(path: string): string {
  if (!isExecutable(path)) throw new Error(`ffmpeg_path ${path} does not exist or is not executable.`);
  return path;
}

/**
 * One ffmpeg run in a child process (off the event loop by construction) at the background
 * priority, killed when `signal` aborts or after `timeoutMs`. Rejects with a VendorFailure
 * carrying the last line ffmpeg wrote to stderr.
 */
export function runFfmpeg(ffmpeg: string, args: string[], signal: AbortSignal, timeoutMs: number): Promise<void> {
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const child = spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      if (child.pid) setPriority(child.pid, BACKGROUND_NICE);
    } catch {
      // A platform that refuses it leaves the priority as it is.
    }
    let stderr = '';
    let killedFor: VendorFailure | undefined;
    const kill = (why: VendorFailure) => {
      killedFor ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => kill(new VendorFailure('timeout', `ffmpeg did not finish within ${timeoutMs} ms`)),
      timeoutMs
    );
    const onAbort = () => kill(new VendorFailure('unavailable', 'the render was stopped'));
    signal.addEventListener('abort', onAbort, { once: true });
    child.stderr.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-2000)));
    const done = (err?: Error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    child.once('error', (e) => done(new VendorFailure('unavailable', `ffmpeg could not start: ${e.message}`)));
    child.once('close', (code) => {
      if (killedFor) return done(killedFor);
      if (code === 0) return done();
      const last = stderr.trim().split('\n').at(-1) ?? '';
      done(new VendorFailure('unavailable', `ffmpeg exited with code ${code}: ${last}`));
    });
  });
}
