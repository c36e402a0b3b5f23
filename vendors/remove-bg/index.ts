import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  secret,
  VendorFailure,
  type IMAGE_CAPABILITIES,
  type ImageMetadataInput,
  type ImplOf,
  joinUrl,
  sendFailure,
} from '../../core/kit/vendor.js';
import { pngSize, removeBgFailure } from './wire.js';

type Caps = typeof IMAGE_CAPABILITIES;

/**
 * remove.bg, the hosted background remover: a second candidate for `image.remove_background`
 * beside the embedded engine. Always asks for PNG, so the answer keeps its alpha whatever the
 * input was. Priced by the image area, as the embedded engine is.
 */
export default defineVendor({
  name: 'remove-bg',
  regions: ['global'],
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ minLength: 1, description: 'remove.bg API key (sent as X-Api-Key).' })),
      base_url: Type.String({ default: 'https://api.remove.bg/v1.0' }),
      size: Type.Union([Type.Literal('auto'), Type.Literal('preview'), Type.Literal('full')], {
        default: 'auto',
        description: "remove.bg's output size: auto (the highest the account's credits allow), preview or full.",
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const url = joinUrl(config.base_url, '/removebg');
    const remove: ImplOf<Caps['image.remove_background']> = {
      async invoke(input: ImageMetadataInput, { signal }) {
        const form = new FormData();
        form.append('image_file', new Blob([new Uint8Array(input.data)]), 'image');
        form.append('size', config.size);
        form.append('format', 'png');
        let res: Response;
        try {
          res = await ctx.fetch(url, { method: 'POST', headers: { 'X-Api-Key': config.api_key }, body: form, signal });
        } catch (e) {
          throw sendFailure(e, signal, 'remove-bg');
        }
        if (!res.ok) {
          const text = await res.text().catch(() => '');
          throw removeBgFailure(res.status, text, res.headers.get('retry-after'));
        }
        const data = Buffer.from(await res.arrayBuffer());
        const size = pngSize(data);
        if (!size) throw new VendorFailure('unavailable', 'remove-bg answered 200 with a body that is not a PNG');
        const width = Number(res.headers.get('x-width')) || size.width;
        const height = Number(res.headers.get('x-height')) || size.height;
        return { data, format: 'png', mime: 'image/png', width, height };
      },
    };
    return { capabilities: { 'image.remove_background': remove } };
  },
});
