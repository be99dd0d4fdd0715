/**
 * The exact orchestrator request the gateway builds for a REST body. The gateway's own app
 * (`buildApp`, the real validation and mapping) runs over an orchestrator client that records
 * each call instead of sending it, and answers through Fastify's `inject` (no socket). The
 * in-process kernel is then fed byte-for-byte what the mesh's orchestrator receives, so the
 * side-by-side comparison differs only by the transport.
 */
import { buildApp, loadGatewayConfig, type OrchestratorClient } from '@ctxmesh/gateway';
import { orchestrator } from '@ctxmesh/proto';
import { silentLogger, type Env } from '@ctxmesh/runtime';
import { InProcEventBus } from '@ctxmesh/stores';

/** One recorded orchestrator call. */
export interface CapturedCall {
  /** Client method, e.g. `assembleContext`, `search`, `retrieve`. */
  method: string;
  /** The request message as the gateway built it. */
  request: unknown;
}

/** The gateway answered without calling the orchestrator (a 4xx, or a route that does not exist). */
export class NotCapturedError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the gateway answered ${status} without calling the orchestrator: ${body.slice(0, 300)}`);
    this.name = 'NotCapturedError';
  }
}

type Proto = Record<string, { fromPartial?: (o: object) => unknown } | undefined>;

/** An empty, well-formed response message for a client method (`assembleContext` → AssembleContextResponse). */
function emptyResponse(method: string): unknown {
  const type = (orchestrator as unknown as Proto)[`${method.charAt(0).toUpperCase()}${method.slice(1)}Response`];
  return type?.fromPartial ? type.fromPartial({}) : {};
}

/** Records the orchestrator requests the gateway builds. */
export class RequestCapture {
  private readonly calls: CapturedCall[] = [];
  private readonly bus = new InProcEventBus({ subjects: ['bench.capture.>'] });
  private readonly app: ReturnType<typeof buildApp>;

  /** @param env the environment the mesh runs with (auth mode, deadlines) */
  constructor(env: Env) {
    const cfg = loadGatewayConfig(env);
    const calls = this.calls;
    const recorder = new Proxy(
      {},
      {
        get(_target, prop) {
          if (prop === 'close') return () => undefined;
          if (typeof prop !== 'string' || prop === 'then') return undefined;
          return async (request: unknown) => {
            calls.push({ method: prop, request });
            return emptyResponse(prop);
          };
        },
      },
    ) as OrchestratorClient;
    // Only the orchestrator is called by the search routes; the sessions client is inert.
    const sessions = { appendMessages: async () => ({}), close: () => undefined } as unknown as Parameters<typeof buildApp>[0]['sessions'];
    this.app = buildApp({ log: silentLogger(), auth: cfg.auth, deadlines: cfg.deadlines, orchestrator: recorder, sessions, bus: this.bus });
  }

  /**
   * The orchestrator request for one REST call.
   * @throws NotCapturedError when the gateway answered without calling the orchestrator
   */
  async capture(url: string, body: unknown, headers: Record<string, string> = {}): Promise<CapturedCall> {
    const before = this.calls.length;
    const res = await this.app.inject({ method: 'POST', url, payload: body as object, headers: { 'content-type': 'application/json', ...headers } });
    const call = this.calls[before];
    if (!call) throw new NotCapturedError(res.statusCode, res.body);
    this.calls.length = 0;
    return call;
  }

  /** Close the app. */
  async close(): Promise<void> {
    await this.app.close();
    await this.bus.close();
  }
}
