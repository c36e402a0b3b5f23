import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import { anyOriginOnSend, answerPreflight } from '../../../core/kit/area.js';
import type { PublicKeys } from '../public-keys.js';

// Flags evaluated from a browser with the account's public key (the one in its Sentry DSN),
// never its project key: the evaluation routes admit it beside project keys, answer any
// origin (errors too), and answer the preflight a page's Authorization header causes.

export type BrowserAccess = (
  url: string,
  methods: string
) => Pick<RouteShorthandOptions, 'onSend'> & {
  config: { publicKey: PublicKeys['principal']; cors: false };
};

export function browserAccess(app: FastifyInstance, keys: PublicKeys): BrowserAccess {
  return (url, methods) => {
    app.options(
      url,
      {
        config: { auth: 'none', cors: false },
        schema: {
          summary: 'CORS preflight of a flag evaluation with the public key: any origin',
          tags: ['observability'],
        },
      },
      (req, reply) => answerPreflight(req, reply, `${methods}, OPTIONS`)
    );
    return { config: { publicKey: keys.principal, cors: false }, onSend: anyOriginOnSend };
  };
}
