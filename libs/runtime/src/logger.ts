/**
 * Structured logs (pino). One root logger per process; services take child loggers.
 */
import pino, { type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** Level. @default info (or LOG_LEVEL) */
  level?: LevelWithSilent;
  /** Base bindings, e.g. `{ service: 'gather' }`. */
  base?: Record<string, unknown>;
  /** Destination stream (tests). @default stdout */
  destination?: pino.DestinationStream;
}

/** Create a JSON logger. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? ((process.env.LOG_LEVEL as LevelWithSilent | undefined) || 'info');
  return pino(
    {
      level,
      base: opts.base ?? {},
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err },
    },
    opts.destination,
  );
}

/** A logger that writes nothing (tests, benches). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
