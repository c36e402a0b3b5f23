// The CLI as one bundle: dist/bin/svc-gateway.js, with its chunks in dist/bin/chunks/, made by
// esbuild from what tsc wrote to dist/. Node.js 20's ES module loader costs ~0.4 ms a module
// whatever its size (kysely's 279 modules import in ~140 ms, bundled in ~17), and a start
// loaded ~1,400 of them: bundled, a start takes about half the CPU (BENCHMARKS.md, `core`).
// The package's exports (`svc-gateway`, `/define`, `/capabilities`) stay the unbundled dist/
// files that plugins import; core/errors.ts and core/router/failure.ts recognise errors made by
// either copy. Packages stay outside the bundle when they are native, loaded only on first use,
// or read files beside their own code.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const EXTERNAL = [
  // native addons
  'better-sqlite3',
  'sharp',
  'onnxruntime-node',
  // vendor SDKs and engines, imported when a vendor or area first needs them
  'pg',
  'ioredis',
  '@aws-sdk/*',
  '@smithy/*',
  'minio',
  'openai',
  'playwright-core',
  'twilio',
  'stripe',
  'nodemailer',
  'tesseract.js',
  '@tesseract.js-data/*',
  'pdfjs-dist',
  'pdf-lib',
  'exifr',
  '@imgly/*',
  'undici',
  // CommonJS loaded with import() on first use (a form upload); @fastify/multipart requires it too
  '@fastify/busboy',
  // find files next to their own code (__dirname, worker files)
  '@fastify/swagger',
  '@fastify/swagger-ui',
  'pino',
  'thread-stream',
];

/**
 * Bundle dist/bin/svc-gateway.js (tsc's output, read before anything is written) over itself.
 * Returns false, leaving tsc's output in place, when esbuild is not installed (a production
 * install without dev dependencies): the CLI then runs unbundled, only slower to start.
 */
export async function bundleCli(root) {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    process.stderr.write('svc-gateway: esbuild is not installed; the CLI runs unbundled (slower to start)\n');
    return false;
  }
  const outdir = join(root, 'dist', 'bin');
  rmSync(join(outdir, 'chunks'), { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [join(outdir, 'svc-gateway.js')],
    outdir,
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    // CommonJS packages inside an ES module bundle call require(): give them one.
    banner: {
      js: "import { createRequire as __svcRequire } from 'node:module';\nconst require = __svcRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  refuseDefaultOnlyChunks(join(outdir, 'chunks'));
  // tsc's source map was of the file the bundle replaced.
  rmSync(join(outdir, 'svc-gateway.js.map'), { force: true });
  return true;
}

/**
 * A CommonJS package bundled and reached by import() becomes a chunk of one `export default
 * require_x()`: its named exports are gone (`const { Busboy } = await import(...)` was undefined
 * in the bundle only, and every S3 form upload failed). Such a package belongs in EXTERNAL, where
 * Node.js finds its named exports itself.
 */
function refuseDefaultOnlyChunks(dir) {
  const bad = readdirSync(dir).filter((f) =>
    /^export default require_\w+\(\);$/m.test(readFileSync(join(dir, f), 'utf8'))
  );
  if (bad.length) {
    throw new Error(
      `bundle-cli: CommonJS loaded by import() was bundled without its named exports (${bad.join(', ')}): `
        + 'add its package to EXTERNAL in scripts/bundle-cli.mjs'
    );
  }
}
