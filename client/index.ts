// svc-gateway/client: a typed client of the gateway that runs wherever fetch does
// (Node 20+, browsers, workers). It has no run-time dependency on the server's code.
export { SvcClient, paginate, type SvcClientOptions } from './svc-client.js';
export { SvcError } from './errors.js';
export type * from './types.js';
