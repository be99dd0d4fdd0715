/**
 * Typed ports over generated clients: `grpcPort(gather.GatherServiceClient, addr, opts)` is an
 * object with one `(request, budget) => Promise<response>` per RPC, each going through
 * {@link callUnary} (the caller's deadline and cancellation, retries only where they are safe,
 * downstream codes translated deliberately). The port's type is derived from the generated
 * client, the way {@link Handlers} is derived from the generated server interface, so a new
 * RPC needs no hand-written wrapper and a wrong request type is a compile error.
 */
import type { Client } from '@grpc/grpc-js';
import type { Budget } from './budget';
import { callUnary, connect, type CallUnaryOptions, type ClientConstructor, type UnaryMethod } from './client';

/** RPC method names of a generated `…Client` (its own keys, not grpc-js `Client`'s). */
export type RpcName<C> = Exclude<keyof C, keyof Client> & string;

/** Request type of RPC `K` of client `C`. */
export type RpcRequest<C, K extends RpcName<C>> = C[K] extends UnaryMethod<infer Req, unknown> ? Req : never;

/** Response type of RPC `K` of client `C`. */
export type RpcResponse<C, K extends RpcName<C>> = C[K] extends UnaryMethod<never, infer Res> ? Res : never;

/** One RPC as a port method: the request and the caller's Budget (required: STYLE B5). */
export type PortMethod<Req, Res> = (request: Req, budget: Budget) => Promise<Res>;

/** Every unary RPC of a generated client `C` as a {@link PortMethod}. */
export type Port<C> = { [K in RpcName<C>]: PortMethod<RpcRequest<C, K>, RpcResponse<C, K>> };

/** Call options a port applies (the domain is the port's). */
export type PortCallOptions = Omit<CallUnaryOptions, 'domain' | 'requestId'>;

/** Options of {@link grpcPort}. */
export interface PortOptions<C> {
  /** Domain of the downstream service (errors and logs). */
  domain: string;
  /** Options of every RPC. @default {} (pass only DEADLINE_EXCEEDED/CANCELLED/UNAVAILABLE; retry) */
  defaults?: PortCallOptions;
  /**
   * Options of single RPCs over the defaults; a function decides per request (e.g. no retry for
   * a request that must not run twice).
   */
  methods?: { [K in RpcName<C>]?: PortCallOptions | ((request: RpcRequest<C, K>) => PortCallOptions) };
  /**
   * Send the request's `identity.request_id` as `x-request-id` (a caller whose budgets carry no
   * request id: the gateway). Otherwise the budget's own request id is sent.
   * @default false
   */
  requestIdFromIdentity?: boolean;
}

/** A generated client constructor with its service definition (what ts-proto's grpc-js output exports). */
export type ServiceClientConstructor<C extends Client> = ClientConstructor<C> & { service: object };

function requestIdOf(request: unknown): string | undefined {
  const identity = (request as { identity?: { requestId?: unknown } } | null)?.identity;
  return typeof identity?.requestId === 'string' && identity.requestId !== '' ? identity.requestId : undefined;
}

/**
 * The typed port over one unary method per RPC, whatever carries them (a grpc-js client's
 * methods, or {@link inProcessPort}'s): each a {@link callUnary} with the port's options.
 */
export function portOver<C>(methodsByName: Record<string, UnaryMethod<unknown, unknown>>, opts: PortOptions<C>): Port<C> {
  const port: Record<string, unknown> = {};
  const methods = (opts.methods ?? {}) as Record<string, PortCallOptions | ((request: unknown) => PortCallOptions) | undefined>;
  for (const [name, method] of Object.entries(methodsByName)) {
    const own = methods[name];
    port[name] = (request: unknown, budget: Budget) =>
      callUnary(method, request, budget, {
        ...opts.defaults,
        ...(typeof own === 'function' ? own(request) : own),
        domain: opts.domain,
        requestId: opts.requestIdFromIdentity ? requestIdOf(request) : undefined,
      });
  }
  return port as Port<C>;
}

/**
 * The typed port of every RPC of `definition` over an already connected client (the caller owns
 * and closes the client; several ports may share one channel).
 * @param definition the generated service definition, e.g. `sessions.SessionsServiceService`
 */
export function clientPort<C extends Client>(client: C, definition: object, opts: PortOptions<C>): Port<C> {
  const methods: Record<string, UnaryMethod<unknown, unknown>> = {};
  for (const name of Object.keys(definition)) methods[name] = (client as unknown as Record<string, UnaryMethod<unknown, unknown>>)[name].bind(client);
  return portOver(methods, opts);
}

/**
 * Connect to `address` and return the typed port of every RPC of the service, plus `close()`
 * for the channel.
 */
export function grpcPort<C extends Client>(Ctor: ServiceClientConstructor<C>, address: string, opts: PortOptions<C>): Port<C> & { close(): void } {
  const client = connect(Ctor, address);
  return Object.assign(clientPort(client, Ctor.service, opts), { close: () => client.close() });
}
