import { defineArea, IMAGE_CAPABILITIES, usdToMicros } from '../../core/kit/area.js';
import { ImageConfig } from './config.js';
import { ImageService, REMOVE_HINT } from './service.js';
import { registerImageRoutes } from './routes.js';

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
      // Discovery shows what the router charges: this price times wallet.markup.
      svc.capabilities.set(cap, {
        ...IMAGE_CAPABILITIES[cap as keyof typeof prices],
        listPrice: () => ({ unit: 'call', micros }),
      });
      // A flat price a call, whichever engine serves it: the router reserves and settles it.
      svc.router.price(cap, () => micros, {
        docs: 'docs/image.md',
        ...(cap === 'image.remove_background' ? { hint: REMOVE_HINT } : {}),
      });
    }
    registerImageRoutes(app, new ImageService(svc, ctx.config), {
      removeMicros: prices['image.remove_background'],
      uploadBufferBytes: ctx.config.upload_buffers_mib * 1024 * 1024,
    });
  },
});
