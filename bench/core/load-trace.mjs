// Preloaded with `node --import` by the core bench's cold-start section: registers a module
// hook that appends the URL of every ESM module (and CommonJS entry point reached through
// `import`) the process loads to the file named by BENCH_LOAD_TRACE, so the bench can list
// what a start loads, such as a vendor SDK that should wait for its first use.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.BENCH_LOAD_TRACE, url + '\\n');
  return next(url, context);
}
`;
if (process.env.BENCH_LOAD_TRACE) register(`data:text/javascript,${encodeURIComponent(hooks)}`);
