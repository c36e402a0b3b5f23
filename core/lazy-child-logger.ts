import type { FastifyBaseLogger } from 'fastify';

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);
const noop = () => undefined;

/**
 * Fastify makes a child logger for every request, and pino runs the redaction over the
 * child's bindings when it is made: a measurable share of a cheap request's CPU. This child
 * is made only when something is logged at an enabled level (or the child itself is asked
 * for something else); a request that logs nothing never pays for it.
 */
// `any` at the edges: pino's Logger (isLevelEnabled) is wider than FastifyBaseLogger.
export function lazyChildLogger(logger: any, bindings: any, opts: any): FastifyBaseLogger {
  let child: any;
  const real = () => (child ??= logger.child(bindings, opts));
  return new Proxy(
    {},
    {
      get(_target, prop) {
        if (!child && typeof prop === 'string') {
          if (LEVELS.has(prop))
            return logger.isLevelEnabled(prop) ? (...args: unknown[]) => (real() as any)[prop](...args) : noop;
          // Fastify checks that a custom child has these; answering them must not make it.
          if (prop === 'child') return (b: Record<string, unknown>, o?: Record<string, unknown>) => real().child(b, o);
          if (prop === 'isLevelEnabled') return (l: string) => logger.isLevelEnabled(l);
          if (prop === 'level') return logger.level;
        }
        const v = Reflect.get(real(), prop);
        return typeof v === 'function' ? v.bind(child) : v;
      },
      set(_target, prop, value) {
        return Reflect.set(real(), prop, value);
      },
    }
  ) as FastifyBaseLogger;
}
