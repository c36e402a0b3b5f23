import pino from 'pino';
import { Value } from '@sinclair/typebox/value';
import { CoreConfigSchema } from '../../config/schema.js';
import type { VendorContext } from '../../core/define.js';
import { Egress } from '../../core/egress/egress.js';
import { configuredHosts, vendorNodeAgents } from '../../core/egress/vendor-agent.js';

/**
 * What the app gives an adapter, for tests that create one directly: global fetch, silent
 * log, and a forward proxy under the default egress rules (loopback refused) or `egressRules`
 * (`{ allow_private: true }` for loopback fakes), started on first use and closed at teardown
 * when `t` is given (a test that never starts it may omit `t`). With the adapter's `config`, also the
 * node:http(s) Agents the app gives (its config's hosts reached, others by the rules).
 */
export function vendorContext(
  instanceId: string,
  t?: { teardown(fn: () => unknown): void },
  egressRules: Record<string, unknown> = {},
  config?: unknown
): VendorContext {
  const egress = new Egress(Value.Default(CoreConfigSchema.properties.egress, { ...egressRules }) as any);
  t?.teardown(() => egress.close());
  return {
    instanceId,
    fetch,
    publicUrl: 'http://127.0.0.1',
    dataDir: '/tmp',
    log: pino({ level: 'silent' }),
    egressProxy: () => egress.proxyUrl(),
    ...(config === undefined
      ? {}
      : {
          nodeAgents: () => {
            const agents = vendorNodeAgents(egress, configuredHosts(config));
            t?.teardown(() => (agents.httpAgent.destroy(), agents.httpsAgent.destroy()));
            return agents;
          },
        }),
  };
}
