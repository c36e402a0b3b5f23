import { EventEmitter } from 'node:events';

export type BusHandler = (message: unknown) => void;

/**
 * Pub/sub between the parts of a gateway, and between gateway nodes when Redis is set:
 * cache invalidation (keys, tiers), realtime fan-out. Messages are JSON values.
 */
export interface Bus {
  publish(topic: string, message: unknown): Promise<void>;
  /** Returns the function that unsubscribes. */
  subscribe(topic: string, handler: BusHandler): Promise<() => Promise<void>>;
  close(): Promise<void>;
  readonly kind: 'local' | 'redis';
}

/** One process: an EventEmitter, delivering asynchronously like a network bus would. */
export class LocalBus implements Bus {
  readonly kind = 'local' as const;
  private readonly ee = new EventEmitter();

  constructor() {
    this.ee.setMaxListeners(0);
  }

  async publish(topic: string, message: unknown): Promise<void> {
    const copy = JSON.parse(JSON.stringify(message ?? null));
    queueMicrotask(() => this.ee.emit(topic, copy));
  }

  async subscribe(topic: string, handler: BusHandler) {
    this.ee.on(topic, handler);
    return async () => {
      this.ee.off(topic, handler);
    };
  }

  async close(): Promise<void> {
    this.ee.removeAllListeners();
  }
}
