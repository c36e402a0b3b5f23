// The contract of the `flags` service: what another area (analytics' PostHog flags call) needs
// of the account's feature flags, without the observability area's types.

export interface FlagAnswer {
  key: string;
  /** The flag's type: `boolean`, `string`, `number` or `json`. */
  type: string;
  value: unknown;
  variant: string;
  /** OpenFeature's reason: STATIC, TARGETING_MATCH, SPLIT, DEFAULT or DISABLED. */
  reason: string;
  /** A boolean flag's value; for other types whether the flag is on. */
  enabled: boolean;
}

/** A flag that could not be evaluated for the context (a rollout without a targeting key). */
export interface FlagFailure {
  key: string;
  error: 'TARGETING_KEY_MISSING';
  message: string;
}

export interface FlagEvaluator {
  /**
   * Every flag of the account (or those in `keys`), for a context of attributes and the id
   * rollouts bucket by; ordered by key.
   */
  evaluateAll(
    accountId: string,
    ctx: Record<string, unknown>,
    targetingKey: string | undefined,
    keys?: readonly string[]
  ): Promise<(FlagAnswer | FlagFailure)[]>;
}
