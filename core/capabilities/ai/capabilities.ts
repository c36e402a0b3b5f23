import { areaPriced, capabilities, capability } from '../capability.js';
import type {
  BatchCancelInput,
  BatchCancelOutput,
  BatchPollInput,
  BatchPollOutput,
  BatchSubmitInput,
  BatchSubmitOutput,
} from './batch.js';
import type { ChatInput, ChatOutput, ChatStreamEvent, EmbedInput, EmbedOutput, Usage } from './chat.js';
import type { ImageEditInput, ImageInput, ImageOutput, ImageVariationInput } from './image.js';
import type { RealtimeTokenInput, RealtimeTokenOutput } from './realtime.js';
import type { AsrInput, AsrOutput, TtsInput, TtsOutput } from './speech.js';

type Stream = AsyncIterable<ChatStreamEvent>;

/** The capabilities of the AI area, in the order discovery lists them. */
export const AI_CAPABILITIES = capabilities({
  'ai.chat': capability<ChatInput, ChatOutput>({ idempotent: true, description: 'Chat completion.' }),
  'ai.chat.stream': capability<ChatInput, Stream, Usage>({
    idempotent: true,
    description: 'Chat completion as a stream of events.',
  }),
  'ai.embed': capability<EmbedInput, EmbedOutput>({ idempotent: true, description: 'Text embeddings.' }),
  // A second vendor batch after one that may exist would run the chat twice.
  'ai.chat.batch': capability<BatchSubmitInput, BatchSubmitOutput>({
    idempotent: false,
    description: "Submit a chat to a vendor's batch API.",
  }),
  'ai.chat.batch.poll': capability<BatchPollInput, BatchPollOutput>({
    idempotent: true,
    description: 'Ask a vendor whether a chat batch is done, and for its answer.',
  }),
  'ai.chat.batch.cancel': capability<BatchCancelInput, BatchCancelOutput>({
    idempotent: true,
    description: 'Ask a vendor to stop a chat batch (best effort).',
  }),
  // A flat price a token (plugins.ai.realtime.price_usd): the minutes are billed to the key's owner.
  'ai.realtime.token': areaPriced<RealtimeTokenInput, RealtimeTokenOutput>({
    idempotent: true,
    description: 'Ephemeral client secret for a live (WebRTC) session.',
  }),
  'ai.tts': capability<TtsInput, TtsOutput>({
    idempotent: true,
    description: 'Speech synthesis: text to audio bytes.',
  }),
  'ai.asr': capability<AsrInput, AsrOutput>({ idempotent: true, description: 'Transcription: audio to text.' }),
  'ai.vision': capability<ChatInput, ChatOutput>({
    idempotent: true,
    description: 'Chat about images (user turns carry inline images).',
  }),
  'ai.vision.stream': capability<ChatInput, Stream, Usage>({
    idempotent: true,
    description: 'Chat about images as a stream of events.',
  }),
  'ai.image': capability<ImageInput, ImageOutput>({ idempotent: true, description: 'Image generation from a prompt.' }),
  'ai.image.edit': capability<ImageEditInput, ImageOutput>({
    idempotent: true,
    description: 'Image edit: new images from uploaded ones, a prompt and an optional mask.',
  }),
  'ai.image.variation': capability<ImageVariationInput, ImageOutput>({
    idempotent: true,
    description: 'Variations of an uploaded image.',
  }),
});
