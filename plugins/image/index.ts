import { defineArea } from '../../core/define.js';
import { IMAGE_CAPABILITIES, type ImagePlan } from '../../core/capabilities/image.js';
import type { Planned, Planner } from '../../core/router/planner.js';
import { usdToMicros } from '../../core/wallet/money.js';
import { ImageConfig } from './config.js';
import { ImageService, REMOVE_HINT } from './service.js';
import { registerImageRoutes } from './routes.js';

/** Every candidate gets the area's flat price for the call (engines are priced by the operator, not per vendor). */
function flatPrice(price: number): Planner<unknown, Planned<ImagePlan>> {
  return (_req, candidates) => candidates.map((c) => ({ id: c.instance.id, plan: { price } }));
}

/** Image processing: resize, rotate, watermark, compress, convert, metadata, background removal; on the embedded
 * sharp and imgly-background engines, or a configured vendor. */
export default defineArea({
  name: 'image',
  configSchema: ImageConfig,
  capabilities: IMAGE_CAPABILITIES,
  register(app, ctx) {
    const svc = ctx.svc;
    const prices = {
      'image.process': usdToMicros(ctx.config.price_usd),
      'image.metadata': usdToMicros(ctx.config.metadata_price_usd),
      'image.remove_background': usdToMicros(ctx.config.remove_background_price_usd),
    } as const;
    for (const [cap, micros] of Object.entries(prices)) {
      svc.router.planner(cap, flatPrice(micros), {
        docs: 'docs/image.md',
        ...(cap === 'image.remove_background' ? { hint: REMOVE_HINT } : {}),
      });
      // Discovery shows what the router charges: this price times wallet.markup.
      svc.capabilities.set(cap, {
        ...IMAGE_CAPABILITIES[cap as keyof typeof prices],
        listPrice: () => ({ unit: 'call', micros }),
      });
    }
    registerImageRoutes(app, new ImageService(svc, ctx.config), {
      removeMicros: prices['image.remove_background'],
      uploadBufferBytes: ctx.config.upload_buffers_mib * 1024 * 1024,
    });
  },
});
