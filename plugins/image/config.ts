import { Type, type Static } from '@sinclair/typebox';

/** `plugins.image` in the config file. */
export const ImageConfig = Type.Object(
  {
    price_usd: Type.Number({
      minimum: 0,
      default: 0.001,
      description: 'Charged for each POST /v1/image/process (before wallet.markup).',
    }),
    metadata_price_usd: Type.Number({
      minimum: 0,
      default: 0.0001,
      description: 'Charged for each POST /v1/image/metadata (before wallet.markup).',
    }),
    remove_background_price_usd: Type.Number({
      minimum: 0,
      default: 0.01,
      description: 'Charged for each remove_background operation (before wallet.markup), whichever engine serves it.',
    }),
    timeout_seconds: Type.Number({
      minimum: 1,
      maximum: 600,
      default: 60,
      description: 'Longest an image call may take, queueing included.',
    }),
    upload_buffers_mib: Type.Integer({
      minimum: 0,
      maximum: 4096,
      default: 64,
      description:
        'Memory kept for reading uploads of 256 KiB and more into reused buffers rather than fresh ones '
        + '(0: none kept). Fresh memory stalls the event loop while it is faulted in: see docs/image.md.',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type ImageConfigT = Static<typeof ImageConfig>;
