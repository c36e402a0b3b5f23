import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  type VendorInstance,
  type IMAGE_CAPABILITIES,
  type ImageMetadataInput,
  type ImplOf,
} from '../../core/kit/vendor.js';
import { BackgroundRemover } from './remover.js';
import { LIBRARY, libraryInstalled, libraryLocation, modelMissing } from './library.js';

type Caps = typeof IMAGE_CAPABILITIES;

/**
 * The embedded background remover: IMG.LY's ONNX segmentation model in a child process of the
 * gateway (the model ships inside the npm package, so nothing is downloaded at run time). Named
 * after the library, as `sharp` is. Priced by the image area; the engine costs nothing per
 * call. Without the library or its model files (library.ts) it serves nothing, as chromium does
 * without a browser: the image area then answers 503 no_vendor_available saying how to install it.
 * `installed` and `location` are for tests.
 */
export function imglyBackground(installed: () => boolean = libraryInstalled, location = libraryLocation) {
  return defineVendor({
    name: 'imgly-background',
    embedded: true,
    regions: ['global'],
    configSchema: Type.Object(
      {
        model: Type.Union([Type.Literal('small'), Type.Literal('medium')], {
          default: 'medium',
          description: 'The model shipped in the package: medium (fp16, better edges) or small (quantized, faster).',
        }),
        timeout_seconds: Type.Number({
          minimum: 1,
          maximum: 600,
          default: 120,
          description: 'Longest one removal may run, the first call (model load) included.',
        }),
        max_waiting_per_account: Type.Integer({
          minimum: 1,
          default: 4,
          description: 'Removals of one account waiting for the engine; one more is refused with 429 rate_limited.',
        }),
      },
      { additionalProperties: false, default: {} }
    ),
    create(config, ctx): VendorInstance {
      if (!installed()) {
        ctx.log.warn(
          `${LIBRARY} is not installed: background removal is off. Install it beside the gateway `
            + `(npm install ${LIBRARY}, with onnxruntime-node-install-cuda=skip in .npmrc) or configure remove-bg.`
        );
        return { capabilities: {} };
      }
      const where = location();
      const missing = modelMissing(where.publicPath, config.model);
      if (missing) {
        ctx.log.warn(
          `${LIBRARY} is installed but ${missing}: background removal is off. Reinstall it `
            + `(npm install ${LIBRARY}) or configure remove-bg.`
        );
        return { capabilities: {} };
      }
      const remover = new BackgroundRemover(
        where,
        config.model,
        config.timeout_seconds * 1000,
        config.max_waiting_per_account
      );
      const remove: ImplOf<Caps['image.remove_background']> = {
        invoke: (input: ImageMetadataInput, call) => remover.run(input.data, call),
      };
      return {
        capabilities: { 'image.remove_background': remove },
        // Healthy while the model files are there (not loaded here: that is the child's work, on the first call).
        async health() {
          const gone = modelMissing(where.publicPath, config.model);
          return gone ? { ok: false, error: `${LIBRARY}: ${gone}` } : { ok: true };
        },
        close: () => remover.close(),
      };
    },
  });
}

export default imglyBackground();
