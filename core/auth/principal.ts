// Its own file: key lookup (keys.ts) returns it and the grant checks (key-grants.ts), which
// keys.ts uses, take it.

/** What a valid key tells every request: who calls, with what rights, on which tier. */
export interface Principal {
  keyId: string;
  accountId: string;
  projectId: string;
  scopes: string[];
  tier: string;
  region: string;
  kind: string;
  status: string;
  /** The key that replaced this one by rotation (it then only lives out its grace period), or null. */
  replacedBy: string | null;
}
