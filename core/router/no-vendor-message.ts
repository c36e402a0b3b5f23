/**
 * Why no vendor can serve a capability, and what to do about it: the message of the 503
 * no_vendor_available and the `reason` GET /v1/discovery gives for an unavailable operation,
 * in the same words. `what` narrows it (`model gpt-4o in region china`).
 */
export function noVendorMessage(capability: string, what?: string): string {
  const how = `Add one under \`vendors:\` in the config file (see docs/configuration.md)${capability.startsWith('ai.') ? ', or register your own key with POST /v1/byok' : ''}.`;
  return `No vendor is configured for ${capability}${what ? ` with ${what}` : ''}. ${how}`;
}
