import { ApiError, ERRORS, type ErrorCode } from '../errors.js';
import { FAILURE_KINDS, type FailureKind, VendorFailure } from '../router/failure.js';

/** Why a pool stopped a task's worker: the task itself never answered. */
export type StopReason = 'timeout' | 'memory' | 'crashed' | 'closed';

/**
 * A task whose worker was ended: past its deadline (named `TimeoutError`, which the router
 * classifies as a timeout), over its memory bound, crashed, or the pool closed.
 */
export class TaskStopped extends Error {
  constructor(
    readonly reason: StopReason,
    message: string
  ) {
    super(message);
    this.name = reason === 'timeout' ? 'TimeoutError' : 'TaskStopped';
  }
}

export interface SerialisedError {
  name: string;
  message: string;
  stack?: string;
  props: Record<string, unknown>;
}

/** The task's error as the worker threw it: a VendorFailure or ApiError again, else a plain Error. */
export function rebuiltError(e: SerialisedError): Error {
  const p = e.props;
  let err: Error;
  if (e.name === 'VendorFailure' && FAILURE_KINDS.includes(p.kind as FailureKind)) {
    err = new VendorFailure(p.kind as FailureKind, e.message, {
      status: typeof p.status === 'number' ? p.status : undefined,
      retryAfterMs: typeof p.retryAfterMs === 'number' ? p.retryAfterMs : undefined,
    });
  } else if (e.name === 'ApiError' && typeof p.code === 'string' && p.code in ERRORS) {
    err = new ApiError(p.code as ErrorCode, e.message, {
      param: typeof p.param === 'string' ? p.param : undefined,
      details: p.details as Record<string, unknown> | undefined,
      headers: p.headers as Record<string, string> | undefined,
    });
  } else {
    err = Object.assign(new Error(e.message), p);
    err.name = e.name;
  }
  if (e.stack) err.stack = e.stack;
  return err;
}
