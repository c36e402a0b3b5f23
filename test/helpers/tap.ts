/** What helpers need of a tap test: a teardown to close what they opened. */
export type Tap = { teardown(fn: () => unknown): void };
