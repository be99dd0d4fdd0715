/** Start the rewrite service on a port (used by main.ts and by the all-in-one launcher). */
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import type { Logger } from 'pino';
import type { RewriteSettings } from './config';
import { createServer } from './server';

/** Start options. */
export interface StartOptions {
  /** Port (0 = any free port). */
  port: number;
  /** Bind host. @default 127.0.0.1 */
  host?: string;
  /** Logger. */
  log: Logger;
  /** Endpoints and fuses. */
  settings: RewriteSettings;
  /** fetch used for provider calls (tests). @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * Bind and serve. Readiness does not probe the providers: a model outage degrades the
 * optional stages it serves (their statuses say so), it never makes the service unready.
 */
export async function startRewrite(opts: StartOptions): Promise<RunningServer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'rewrite' });
  log.info(
    {
      model: opts.settings.llm ? opts.settings.llm.model : null,
      rerank: opts.settings.rerank ? opts.settings.rerank.model || opts.settings.rerank.style : null,
      enableIntent: opts.settings.enableIntent,
    },
    opts.settings.llm ? 'chat model configured' : 'no chat model: expansion off, extractive digest',
  );
  return startServer({
    domain: 'rewrite',
    services: [createServer({ settings: opts.settings, log, shutdownSignal: shutdownController.signal, fetch: opts.fetch })],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
  });
}
