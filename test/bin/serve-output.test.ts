import t from 'tap';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { cliCommand } from '../helpers/cli-command.js';
import { DIALECT } from '../helpers/app.js';
import { ROOT, cliEnv, startCli } from './fixtures/cli.js';

// database-independent: the CLI's output and parent watch; app.svc.dialect is config-doc.test.ts's, on both.

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

/** Resolve with the text once `pattern` appears in it. */
function waitFor(
  stream: NodeJS.ReadableStream,
  pattern: RegExp,
  ms = 60_000
): Promise<{ text: string; match: RegExpExecArray }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${ms} ms: ${text}`)), ms);
    stream.on('data', (d) => {
      text += d;
      const match = pattern.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve({ text, match });
      }
    });
  });
}

t.test('stdout not a terminal: only JSON lines, the start banner is the "listening on" line\'s fields', async (t) => {
  const { env } = await cliEnv(t);
  const child = startCli(['serve', '--port', '0'], { env }); // SVC_LOG_LEVEL=warn: the ready line still comes
  t.teardown(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const { match } = await waitFor(child.stdout!, /listening on (http:\/\/\S+)[^\n]*\n/);
  child.kill('SIGTERM');
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  await once(child, 'exit');
  const lines = `${match.input}${out}`.split('\n').filter(Boolean);
  for (const l of lines) t.doesNotThrow(() => JSON.parse(l), `a JSON line: ${l}`);
  const ready = lines.map((l) => JSON.parse(l)).filter((l) => /listening on/.test(l.msg));
  t.equal(ready.length, 1, 'one ready line, not one from Fastify too');
  t.notMatch(lines.join('\n'), /Server listening at/);
  t.match(ready[0], {
    level: 30,
    url: match[1],
    database: DIALECT,
    // package.json's, read from where the CLI's bundled chunks sit too (not version.ts's fallback)
    version: (JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string }).version,
    activate: `curl -s -X POST ${match[1]}/v1/activate -H 'content-type: application/json' -d '{}'`,
    docs: `${match[1]}/docs`,
  });
  t.equal(stderr, '', 'nothing on stderr');
});

t.test('stdout a terminal: the banner is text on stderr, no JSON ready line', async (t) => {
  const { env } = await cliEnv(t);
  const cmd = [process.execPath, ...cliCommand(), 'serve', '--port', '0'].map(sq).join(' ');
  // script(1) gives the command a terminal; its output (both streams) comes back here.
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { env, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  const { text } = await waitFor(child.stdout!, /API docs: \S+\/docs/);
  const banner = String.raw`svc-gateway \S+ listening on http://127\.0\.0\.1:\d+ \(database: ${DIALECT}, data: [^)]+\)`;
  t.match(text, new RegExp(String.raw`${banner}\r?\nActivate an account:\r?\n  curl -s -X POST `));
  t.notMatch(text, /"msg":"svc-gateway[^"]*listening on/, 'not also as a log line');
  child.kill('SIGTERM');
  await once(child, 'exit');
});

t.test('started by npm: the gateway exits when npm is gone (SIGKILL to its parent) and frees the port', async (t) => {
  const { env } = await cliEnv(t);
  const cmd = [process.execPath, ...cliCommand(), 'serve', '--port', '0'].map(sq).join(' ');
  // As `npm start` runs it: npm -> sh -> node; the outer sh stands for npm, and the inner one
  // (which does not exec node, for the `; true`) outlives it, as sh does when npm is killed.
  const inner = `sh -c ${sq(`${cmd}; true`)}`;
  // Info level: the "shutting down" line and any slow shutdown step are in the output kept below.
  const sh = spawn('sh', ['-c', `${inner} & echo "pid $!"; wait`], {
    env: { ...env, npm_command: 'start', SVC_LOG_LEVEL: 'info' },
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  sh.stdout!.on('data', (d) => (output += d));
  sh.stderr!.on('data', (d) => (output += d));
  const { match } = await waitFor(sh.stdout!, /^pid (\d+)\n[\s\S]*listening on http:\/\/127\.0\.0\.1:(\d+)/);
  const [pid, port] = [Number(match[1]), Number(match[2])];
  // What each process's parent was, for a failure's comment: the watch compares them.
  const stat = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/stat`, 'utf8').trim();
    } catch {
      return `${p}: gone`;
    }
  };
  t.teardown(() => {
    // Only when the test failed is anything left: the gateway (the inner sh's child), then the sh.
    sh.kill('SIGKILL');
    let children: number[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      /* gone */
    }
    for (const p of [...children, pid]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });
  t.equal(await refused(port), false, 'serving');
  sh.kill('SIGKILL');
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 100));
    gone = await refused(port);
  }
  t.ok(gone, "the port is free within 10 s of the parent's death");
  if (!gone) {
    let gateway = '';
    try {
      gateway = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    } catch {
      /* the inner sh is gone */
    }
    t.comment(`inner sh ${stat(pid)}; gateway ${gateway && stat(Number(gateway))}`);
    t.comment(`output:\n${output.slice(-4000)}`);
  }
});

/**
 * The gateway at a terminal (script(1)), one request to it, then SIGTERM: everything it wrote.
 * `until`: a line to wait for before the SIGTERM (script drops what the pty still holds when it
 * dies, and the request's last log line is written after the client has the response).
 */
async function oneRequestAtATerminal(t: any, extraEnv: NodeJS.ProcessEnv, until?: RegExp): Promise<string> {
  const { env } = await cliEnv(t);
  const cmd = [process.execPath, ...cliCommand(), 'serve', '--port', '0'].map(sq).join(' ');
  const child = spawn('script', ['-qec', cmd, '/dev/null'], {
    env: { ...env, SVC_LOG_LEVEL: 'info', ...extraEnv },
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  const { match } = await waitFor(child.stdout!, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const res = await fetch(`${match[1]}/v1/discovery`);
  t.equal(res.status, 200);
  await res.arrayBuffer();
  if (until && !until.test(text))
    await new Promise<void>((resolve) => {
      const seen = () => {
        if (!until.test(text)) return;
        child.stdout!.off('data', seen);
        resolve();
      };
      child.stdout!.on('data', seen);
    });
  child.kill('SIGTERM');
  await once(child, 'exit');
  return text;
}

t.test('at a terminal, requests are not logged unless asked (log.requests / SVC_LOG_REQUESTS)', async (t) => {
  const quiet = await oneRequestAtATerminal(t, {});
  t.match(quiet, /"msg":"egress: loopback targets/, 'info lines still come');
  t.notMatch(quiet, /request completed|incoming request/, 'no line per request under the banner');
  const asked = await oneRequestAtATerminal(t, { SVC_LOG_REQUESTS: 'true' }, /"msg":"request completed"/);
  t.match(asked, /"url":"\/v1\/discovery"[^\n]*"msg":"incoming request"/);
  t.match(asked, /"msg":"request completed"/);
});
