// s3rver (npm), the comparison for small objects, in its own process.
import { createRequire } from 'node:module';
const S3rver = createRequire(import.meta.url)('s3rver');
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: process.argv[2],
  configureBuckets: [{ name: 'bench' }],
});
const addr = await server.run();
process.send?.({ port: addr.port });
