/**
 * Composition root: `ctxmesh serve gateway`. The only file that reads process.env.
 * (Telemetry is started by the CLI before any gRPC module loads.)
 */
import { ConfigError, connectNats, createLogger, runMain } from '@ctxmesh/runtime';
import { NatsEventBus } from '@ctxmesh/stores';
import { loadGatewayConfig } from './config';
import { startGateway } from './start';

/** Run the gateway as its own process; the event bus is NATS JetStream (`NATS_URL`). */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'gateway' } });
  return runMain('gateway', log, async () => {
    const cfg = loadGatewayConfig(process.env);
    if (!cfg.natsUrl) {
      throw new ConfigError([
        'NATS_URL: required by `ctxmesh serve gateway`: writes reach the indexer over NATS JetStream (the in-process bus only works inside `ctxmesh start`)',
      ]);
    }
    const nc = await connectNats(cfg.natsUrl, 'ctxmesh-gateway');
    try {
      const bus = await NatsEventBus.create(nc, {
        stream: cfg.ingest.stream,
        // The stream covers every ingest subject (as the indexer declares it), not only writes.
        subjects: [cfg.ingest.subject.replace(/\.[^.]+$/, '.>')],
        deadLetterSubject: cfg.ingest.deadLetterSubject,
        doneSubjectPrefix: cfg.ingest.doneSubjectPrefix,
      });
      const gateway = await startGateway({
        port: cfg.port,
        host: cfg.host,
        log,
        orchestratorAddr: cfg.orchestratorAddr,
        sessionsAddr: cfg.sessionsAddr,
        bus,
        ingestSubject: cfg.ingest.subject,
        auth: cfg.auth,
        deadlines: cfg.deadlines,
        bodyLimitBytes: cfg.bodyLimitBytes,
        maxDocumentBytes: cfg.maxDocumentBytes,
        receive: cfg.receive,
        hooks: cfg.hooks,
      });
      return {
        stop: async () => {
          await gateway.stop();
          await bus.close();
          await nc.drain();
        },
      };
    } catch (err) {
      await nc.close();
      throw err;
    }
  });
}
