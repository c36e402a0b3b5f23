import { readFileSync } from 'node:fs';

// `npx svc-gateway` runs the gateway as npm's grandchild (npm -> sh -> node). A SIGTERM to
// npm (a supervisor stopping "its" process, a container runtime) kills npm and sh but not
// node, which then keeps running, orphaned, and holds the port. process.ppid is read once
// at start, so the parent's death is seen from /proc (Linux) or, elsewhere, by probing the
// first parent's pid.

function currentParent(): number | undefined {
  try {
    // Field 4 of /proc/self/stat, after "pid (comm)"; comm may contain spaces and parentheses.
    const stat = readFileSync('/proc/self/stat', 'utf8');
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
export function exitWithNpm(onOrphaned: () => void, env: NodeJS.ProcessEnv = process.env, everyMs = 500): void {
  const first = process.ppid;
  if (!env.npm_command || first <= 1) return;
  const timer = setInterval(() => {
    const now = currentParent();
    if (now === undefined ? alive(first) : now === first) return;
    clearInterval(timer);
    onOrphaned();
  }, everyMs);
  timer.unref();
}
