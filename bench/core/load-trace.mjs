// Preloaded with `node --import` by the core bench's cold-start section, with BENCH_LOAD_TRACE
// naming a file: lists every module the process loads there, one URL a line, so the bench can
// tell what a start loads, such as a vendor SDK that should wait for its first use. ESM modules
// come from a module hook as they load; CommonJS modules, which Node.js 20's hooks do not see
// when `require`d, from the require cache when the bench stops the process with SIGTERM.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.BENCH_LOAD_TRACE, url + '\\n');
  return next(url, context);
}
`;
const file = process.env.BENCH_LOAD_TRACE;
if (file) {
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
  const cache = createRequire(import.meta.url).cache;
  process.prependListener('SIGTERM', () => {
    appendFileSync(
      file,
      Object.keys(cache)
        .map((p) => `${pathToFileURL(p).href}\n`)
        .join('')
    );
  });
}
