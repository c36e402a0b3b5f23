import type { Kysely } from 'kysely';

// Gateway events ("email.delivered", "sms.failed"…): an area emits one inside the transaction
// that changes the state it reports, so an event exists iff the change committed. Core cannot
// import an area, so it keeps the registry; the area that delivers (scheduling: signed,
// retried Standard Webhooks to the account's event endpoints) plugs its sink in at build time.
// With no sink (scheduling switched off) an emit records nothing.

/** What an area emits: whose, which type, and the data (usually the record as the API shows it). */
export interface EventInput {
  accountId: string;
  /** A declared type, `<area>.<what>` (`email.delivered`). */
  type: string;
  data: Record<string, unknown>;
}

/** An event as a sink receives it: stamped with the time it was emitted (epoch ms). */
export interface GatewayEvent extends EventInput {
  timestamp: number;
}

/** Where events go: writes their deliveries in the emitter's transaction (never a network call). */
export interface EventSink {
  deliver(trx: Kysely<any>, event: GatewayEvent): Promise<void>;
}

const TYPE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

export class Events {
  private sink?: EventSink;
  private readonly types = new Map<string, string>();

  /**
   * The types an area emits, with what each means (the endpoint filter accepts these alone,
   * and discovery lists them). Called at build time, in the area's register().
   */
  declare(types: Record<string, string>): void {
    for (const [type, description] of Object.entries(types)) {
      if (!TYPE.test(type)) throw new Error(`event type "${type}" is not of the form area.what`);
      if (this.types.has(type)) throw new Error(`event type "${type}" is declared twice`);
      this.types.set(type, description);
    }
  }

  /** Every declared type and its description, sorted by type. */
  declared(): Array<{ type: string; description: string }> {
    return [...this.types].sort(([a], [b]) => a.localeCompare(b)).map(([type, description]) => ({ type, description }));
  }

  isDeclared(type: string): boolean {
    return this.types.has(type);
  }

  /** The delivering area's sink; one per gateway. */
  deliverWith(sink: EventSink): void {
    if (this.sink) throw new Error('an event sink is already registered');
    this.sink = sink;
  }

  /** Whether emitted events go anywhere (false: the scheduling area is switched off). */
  get delivering(): boolean {
    return this.sink !== undefined;
  }

  /**
   * Record an event in the caller's transaction: one delivery per matching endpoint of the
   * account, sent after the commit. An undeclared type is a bug of the emitting area.
   */
  async emit(trx: Kysely<any>, e: EventInput): Promise<void> {
    if (!this.types.has(e.type)) throw new Error(`event type "${e.type}" was never declared (svc.events.declare)`);
    if (!this.sink) return;
    await this.sink.deliver(trx, { ...e, timestamp: Date.now() });
  }
}
