// The image contracts: `ai.image` (ImageInput -> ImageOutput), `ai.image.edit`
// (ImageEditInput -> ImageOutput) and `ai.image.variation` (ImageVariationInput -> ImageOutput).

/** `ai.image`: generate `n` images from a prompt. */
export interface ImageInput {
  prompt: string;
  n: number;
  /** `WIDTHxHEIGHT` or `auto`; the vendor's default when absent. */
  size?: string;
}

export interface ImageOutput {
  images: Array<{ data: Buffer; mime: string }>;
  model: string;
}

/** An uploaded image for `ai.image.edit` and `ai.image.variation`: the area has checked its type and size. */
export interface ImageFile {
  data: Buffer;
  mime: 'image/png' | 'image/jpeg' | 'image/webp';
  /** With the extension of its type: vendors read the format from it. */
  filename: string;
}

/**
 * `ai.image.edit`: `n` images made from `images` (the one to edit, or several references for
 * models that take them) as the prompt says; where a `mask` (PNG) is transparent is what changes.
 */
export interface ImageEditInput extends ImageInput {
  images: ImageFile[];
  mask?: ImageFile;
}

/** `ai.image.variation`: `n` variations of one image, no prompt. */
export interface ImageVariationInput {
  image: ImageFile;
  n: number;
  size?: string;
}
