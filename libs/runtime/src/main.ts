/**
 * Process lifecycle for composition roots (`main.ts`): start, then on SIGTERM/SIGINT stop in
 * reverse order and exit; a configuration error is printed with every problem and exits 1.
 */
import type { Logger } from 'pino';
import { ConfigError } from './config';

/** Something that can be stopped. */
export interface Stoppable {
  /** Stop gracefully. */
  stop(): Promise<void>;
}

/**
 * Run `start` and keep the process alive until a signal; then call `stop` once (a second
 * signal forces exit).
 */
export async function runMain(name: string, log: Logger, start: () => Promise<Stoppable>): Promise<void> {
  let running: Stoppable;
  try {
    running = await start();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
    } else {
      log.fatal({ err }, `${name} failed to start`);
    }
    process.exit(1);
  }
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal: sig }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal: sig }, 'stopping');
    running
      .stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'error while stopping');
        process.exit(1);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
