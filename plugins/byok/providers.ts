import type { RegisteredInstance } from '../../core/kit/area.js';

/**
 * May BYOK keys registered under `provider` be sent to this instance? By its instance id or
 * preset always; by the adapter's BYOK provider (`openai`, `anthropic`) too, except for the
 * generic openai-compatible adapter, whose instances are different companies: a DeepSeek key
 * must never travel to Groq.
 */
export function servesProvider(inst: RegisteredInstance, provider: string): boolean {
  const b = inst.def.byok;
  if (!b) return false;
  if (inst.id === provider || inst.redactedConfig?.preset === provider) return true;
  return b.provider === provider && inst.adapter !== 'openai-compatible';
}

/** The caller's credentials for this instance, if any provider they registered serves it. */
export function credentialsFor(
  inst: RegisteredInstance,
  byok: Map<string, Record<string, string>>
): Record<string, string> | undefined {
  for (const [provider, creds] of byok) if (servesProvider(inst, provider)) return creds;
  return undefined;
}
