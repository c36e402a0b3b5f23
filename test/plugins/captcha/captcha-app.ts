import type { FastifyInstance } from 'fastify';
import { solveChallenge } from 'altcha-lib/v1';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import type { Tap } from '../../helpers/tap.js';

// A gateway for the captcha tests, two accounts, and the browser's half of the service widget:
// fetch a challenge as a page on `origin` would, solve it with altcha-lib, encode the payload.

export async function captchaApp(t: Tap, overrides: Record<string, unknown> = {}) {
  const made = await makeApp(t, overrides);
  const a = await activate(made.app);
  const b = await activate(made.app);
  return { ...made, a, b };
}

export const post = (app: FastifyInstance, who: Activated, url: string, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url, headers: who.auth, payload });

export async function siteKey(app: FastifyInstance, who: Activated, body: Record<string, unknown> = {}) {
  const res = await post(app, who, '/v1/captcha/site-keys', { difficulty: 1000, ...body });
  if (res.statusCode !== 200) throw new Error(`site key: ${res.statusCode} ${res.body}`);
  return res.json() as { site_key_id: string; challenge_url: string };
}

export async function challenge(app: FastifyInstance, siteKeyId: string, origin?: string) {
  return app.inject({
    method: 'GET',
    url: `/v1/captcha/sites/${siteKeyId}/challenge`,
    headers: origin ? { origin } : {},
  });
}

/** What the widget submits: the solution as base64 JSON, found as the browser finds it. */
export async function solve(c: {
  algorithm: string;
  challenge: string;
  salt: string;
  signature: string;
  maxnumber: number;
}) {
  const solution = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  if (!solution) throw new Error('no solution found');
  const payload = {
    algorithm: c.algorithm,
    challenge: c.challenge,
    number: solution.number,
    salt: c.salt,
    signature: c.signature,
    took: solution.took,
  };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

/** A solved token from a fresh challenge of the site key, as a page on `origin` gets one. */
export async function solvedToken(app: FastifyInstance, siteKeyId: string, origin?: string) {
  const res = await challenge(app, siteKeyId, origin);
  if (res.statusCode !== 200) throw new Error(`challenge: ${res.statusCode} ${res.body}`);
  return solve(res.json());
}

export const balance = async (app: FastifyInstance, who: Activated) => app.svc.wallet.balance(who.account_id);
