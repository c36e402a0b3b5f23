import type { FailureKind } from './failure.js';
import type { RegisteredInstance } from './registry.js';

/** A caller's own credentials for one vendor instance (BYOK): field name → value. */
export type Credentials = Record<string, string>;

/**
 * Where callers' own vendor credentials come from (the byok area registers one). The router
 * asks it, for a planned call, which instances may use which of the caller's credentials;
 * those candidates go first, are charged the platform fee, cool down for this caller alone
 * and have their credentials scrubbed from vendor text. The credentials reach the area's
 * planner, which puts each into the plan of the instance it is for, and nowhere else.
 */
export interface CredentialsProvider {
  /**
   * Per instance id (among `instances`), the caller's credentials that instance may use.
   * Asked on every planned call: an account without keys (most) must be answered cheaply.
   */
  credentials(accountId: string, instances: readonly RegisteredInstance[]): Promise<Map<string, Credentials>>;
  /** Micro-USD charged as it is (never marked up) for a call served with the caller's credentials. */
  feeMicros(): number;
  /**
   * The key a failure with the caller's credentials cools an instance down under, beside the
   * instance id: it says nothing about the operator's key on the same instance.
   */
  cooldownScope(accountId: string): string;
  /** The vendor refused the caller's credentials (an `auth` failure): stop using them. Must not throw. */
  invalidate(accountId: string, instanceId: string, credentials: Credentials, kind: FailureKind): Promise<void>;
}

/** A candidate served with the caller's credentials, and the fee it is charged. */
export interface ByokUse {
  credentials: Credentials;
  fee: number;
}
