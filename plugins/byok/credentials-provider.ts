import type { Logger } from 'pino';
import type { FailureKind, Credentials, CredentialsProvider, RegisteredInstance } from '../../core/kit/area.js';
import type { ByokStore } from './store.js';
import { NoByokCache } from './no-byok-cache.js';
import { credentialsFor } from './providers.js';

/**
 * BYOK as the router's credentials provider: a caller's active keys, each offered only to the
 * instances its provider serves; a key the vendor refuses on a call is marked invalid.
 */
export class ByokCredentials implements CredentialsProvider {
  /** Accounts known to have no active key (dropped on BYOK_CHANGED from any node). */
  readonly noByok = new NoByokCache();

  constructor(
    private readonly store: ByokStore,
    private readonly fee: number,
    private readonly log: Logger
  ) {}

  async credentials(accountId: string, instances: readonly RegisteredInstance[]): Promise<Map<string, Credentials>> {
    const out = new Map<string, Credentials>();
    // Most accounts have no key: that answer is cached, so a call makes no lookup for it.
    if (this.noByok.has(accountId)) return out;
    const epoch = this.noByok.epoch;
    const keys = await this.store.active(accountId);
    if (!keys.size) this.noByok.add(accountId, epoch);
    for (const inst of instances) {
      const creds = credentialsFor(inst, keys);
      if (creds) out.set(inst.id, creds);
    }
    return out;
  }

  feeMicros(): number {
    return this.fee;
  }

  cooldownScope(accountId: string): string {
    return `byok:${accountId}`;
  }

  async invalidate(accountId: string, instanceId: string, credentials: Credentials, kind: FailureKind): Promise<void> {
    const error = {
      code: 'vendor_rejected' as const,
      message: `${instanceId} refused the key on a call (${kind}); test it again once fixed.`,
    };
    await this.store
      .invalidate(accountId, credentials, error)
      .catch((e) => this.log.warn({ err: e, instanceId }, 'marking a refused BYOK key invalid failed'));
  }
}
