import { Type } from '@sinclair/typebox';
import { defineVendor, type VendorInstance } from '../../core/define.js';
import { planPrice, type IMAGE_CAPABILITIES, type ImageMetadataInput } from '../../core/capabilities/image.js';
import type { ImplOf } from '../../core/capabilities/capability.js';
import { BackgroundRemover } from './remover.js';
import { LIBRARY, libraryInstalled } from './library.js';

type Caps = typeof IMAGE_CAPABILITIES;

/**
 * The embedded background remover: IMG.LY's ONNX segmentation model in the gateway's process
 * (the model ships inside the npm package, so nothing is downloaded at run time). Named after
 * the library, as `sharp` is. Priced by the image area's plan; the engine costs nothing per call.
 * Without the library installed (library.ts) it serves nothing, as chromium does without a
 * browser: the image area then answers 503 no_vendor_available saying how to install it.
 * `installed` is for tests.
 */
export function imglyBackground(installed: () => boolean = libraryInstalled) {
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
      const remover = new BackgroundRemover(config.model, config.timeout_seconds * 1000);
      const remove: ImplOf<Caps['image.remove_background']> = {
        invoke: (input: ImageMetadataInput, { signal }) => remover.run(input.data, signal),
        price: (_input, _output, plan) => planPrice(plan),
      };
      return {
        capabilities: { 'image.remove_background': remove },
        // Healthy when the library and its native onnxruntime load here (the model itself loads on the first call).
        async health() {
          try {
            await remover.load();
            return { ok: true };
          } catch (e) {
            return { ok: false, error: (e as Error).message };
          }
        },
        close: () => remover.close(),
      };
    },
  });
}

export default imglyBackground();
