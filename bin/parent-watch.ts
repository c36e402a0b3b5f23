import { readFileSync } from 'node:fs';

// `npx svc-gateway` and `npm start` run the gateway as npm's grandchild (npm -> sh -> node).
// A SIGTERM to npx (a supervisor stopping "its" process) ends npm, and maybe sh, but not node,
// which keeps running, orphaned, and holds the port; a SIGKILL to npm leaves sh waiting for
// node. So both the parent and the grandparent are watched: either one going away (or the
// parent being adopted by another) means npm is gone. process.ppid is read once at start, so
// this reads /proc (Linux); elsewhere it probes whether the first parent still lives.

/** The parent of `pid` (default: this process) from /proc, or undefined where there is none. */
function parentOf(pid: number | 'self' = 'self'): number | undefined {
  try {
    // Field 4 of /proc/PID/stat, after "pid (comm)"; comm may contain spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Call `onOrphaned` once when the process that started this one has exited. Only when npm
 * started it (npm_command is set by `npm start`, `npm run` and `npx`): npm is a foreground
 * wrapper the gateway must not outlive, while `node dist/bin/svc-gateway.js &` from a script
 * that then exits is a deliberate way to leave it running. The timer does not keep the process alive.
 */
export function exitWithNpm(
  onOrphaned: () => void,
  env: NodeJS.ProcessEnv = process.env,
  everyMs = 500,
  parents = npmParents(env)
): void {
  if (!parents) return;
  const { parent, grandparent } = parents;
  const npmAlive = () => {
    const now = parentOf();
    if (now === undefined) return alive(parent);
    return now === parent && (grandparent === undefined || grandparent <= 1 || parentOf(parent) === grandparent);
  };
  const timer = setInterval(() => {
    if (npmAlive()) return;
    clearInterval(timer);
    onOrphaned();
  }, everyMs);
  timer.unref();
}

/**
 * The parent and grandparent to watch, read when called: at the very start of `serve`, while npm
 * surely lives. Read after the start-up (it takes seconds), npm may already be gone, the parent
 * adopted by pid 1, and a grandparent of 1 is taken for npm running as a container's pid 1.
 */
export function npmParents(env: NodeJS.ProcessEnv = process.env): { parent: number; grandparent?: number } | undefined {
  const parent = process.ppid;
  if (!env.npm_command || parent <= 1) return undefined;
  return { parent, grandparent: parentOf(parent) };
}
