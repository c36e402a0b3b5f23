import type { FlagAnswer, FlagEvaluator, FlagFailure } from '../../../core/kit/area.js';
import { evaluateFlag, TargetingKeyMissing } from './evaluate.js';
import type { FlagStore } from './flag-store.js';

// The `flags` service other areas look up through svc.services (analytics answers PostHog's
// flags call with it): the same evaluation, from the same memory, as the flags GET and OFREP.

export function flagService(store: FlagStore): FlagEvaluator {
  return {
    async evaluateAll(accountId, ctx, targetingKey, keys) {
      const loaded = await store.flags(accountId);
      const flags = keys
        ? keys.flatMap((k) => loaded.flags.get(k) ?? [])
        : [...loaded.flags.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
      return flags.map((f): FlagAnswer | FlagFailure => {
        try {
          return { ...evaluateFlag(f, ctx, targetingKey), type: f.type };
        } catch (e) {
          if (!(e instanceof TargetingKeyMissing)) throw e;
          return { key: f.key, error: 'TARGETING_KEY_MISSING', message: e.message };
        }
      });
    },
  };
}
