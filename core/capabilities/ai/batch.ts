// Capability contracts for chat batches: `ai.chat.batch` submits one chat to a vendor's batch
// API, `ai.chat.batch.poll` asks how it went, `ai.chat.batch.cancel` asks the vendor to stop it
// (best effort: a vendor that refuses does not keep a batch from being canceled). Adapters import these types; the area never
// imports an adapter.
import type { ChatInput, ChatOutput } from './chat.js';

/** One chat for a vendor's batch API; the plan carries the batch prices. */
export interface BatchSubmitInput extends ChatInput {
  /** Our batch id: the vendor's `custom_id` of the one request in the batch. */
  custom_id: string;
}

export interface BatchSubmitOutput {
  vendor_batch_id: string;
}

export interface BatchPollInput {
  vendor_batch_id: string;
  custom_id: string;
  /** The model the batch was submitted for (a result without one names it). */
  model: string;
  /** The caller's own key (BYOK) the batch was submitted with. */
  credentials?: Record<string, string>;
  /** What the chat asked for that decides how the vendor's answer reads (a JSON mode may come back as a tool call). */
  request?: Pick<ChatInput, 'response_format' | 'tools' | 'tool_choice'>;
}

export type BatchPollOutput =
  | { status: 'running' }
  | { status: 'succeeded'; output: ChatOutput }
  /** The vendor gave up: the request errored, the batch failed, expired or was cancelled. */
  | { status: 'failed'; error: string };

/** `ai.chat.batch.cancel`: ask a vendor to stop a batch nobody will be charged for. */
export const BATCH_CANCEL_CAPABILITY = 'ai.chat.batch.cancel';

export interface BatchCancelInput {
  vendor_batch_id: string;
  /** The caller's own key (BYOK) the batch was submitted with. */
  credentials?: Record<string, string>;
}

/** The vendor's own status word after the request (`cancelling`, `canceling`, `ended`…), for the log. */
export interface BatchCancelOutput {
  vendor_status: string;
}
