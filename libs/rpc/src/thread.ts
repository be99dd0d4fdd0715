/**
 * Calls into services of another `worker_threads` thread of the same process, over a
 * `MessagePort`: the same {@link Port} as {@link grpcPort} and {@link inProcessPort}, with the
 * request and response handed over by the port's structured clone instead of HTTP/2 framing and
 * protobuf encoding. The one-process mesh's search thread is reached this way.
 *
 * As with {@link inProcessPort}, everything above and below the wire is the gRPC path's: the
 * client side is {@link callUnary} (the caller's Budget, retries, the translation of downstream
 * codes), the server side is `implement`'s wrapper (a Budget from the call's deadline, the
 * handler, the error model's status with ErrorInfo details in its metadata, the `observe`
 * metrics hook) running in the serving thread. The transport carries the deadline (the caller
 * gets DEADLINE_EXCEEDED when it passes and the serving side's call is cancelled), cancellation
 * (the caller's `cancel()` and its parent call's), the metadata both ways (`x-request-id`, the
 * error details), and the trace context (W3C `traceparent` through the OpenTelemetry
 * propagator), with a client span here and a server span there named as the gRPC
 * instrumentation names them.
 *
 * Protocol (structured messages; one port carries every service the serving side mounts):
 * - `{ t: 'call', id, path, request, metadata, deadline }` → one `{ t: 'reply', id, … }`;
 * - `{ t: 'cancel', id }`: the caller gave up (no reply follows, or it is ignored).
 */
import type { MessagePort } from 'node:worker_threads';
import { Metadata, status, type ServerUnaryCall, type StatusObject, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { UnaryMethod } from './client';
import type { MethodDefinition } from './inproc';
import { InProcessServerCall, deadlineMs, serviceError, startLocalCall } from './local-call';
import { portOver, type Port, type PortOptions } from './port';
import type { MountedService } from './server';

const tracer = trace.getTracer('@ctxmesh/rpc');

/** Metadata as it crosses the port: each key with its values (binary ones as bytes). */
type WireMetadata = Array<[string, Array<string | Uint8Array>]>;

/** A message from the calling side. */
type ToServer = { t: 'call'; id: number; path: string; request: unknown; metadata: WireMetadata; deadline: number | null } | { t: 'cancel'; id: number };

/** A message from the serving side. */
type ToClient = { t: 'reply'; id: number; ok: true; response: unknown } | { t: 'reply'; id: number; ok: false; code: number; details: string; metadata: WireMetadata };

function toWire(md: Metadata): WireMetadata {
  return Object.entries(md.toJSON()).map(([k, vs]) => [k, vs.map((v) => (typeof v === 'string' ? v : new Uint8Array(v)))]);
}

function fromWire(wire: WireMetadata): Metadata {
  const md = new Metadata();
  for (const [k, vs] of wire) for (const v of vs) md.add(k, typeof v === 'string' ? v : Buffer.from(v));
  return md;
}

/**
 * Serve `services` to callers on the other end of `port` (the serving thread's side). Every
 * call runs the service's `implement`ed method, as gRPC would run it.
 * @returns a function that stops serving (calls in flight are cancelled; the port stays open)
 */
export function serveOverPort(port: MessagePort, services: ReadonlyArray<Pick<MountedService, 'definition' | 'implementation' | 'name'>>): () => void {
  type Handle = (call: ServerUnaryCall<unknown, unknown>, callback: (err: Partial<StatusObject> | null, res?: unknown) => void) => void;
  const methods = new Map<string, { handle: Handle; service: string; method: string }>();
  for (const s of services) {
    const impl = s.implementation as UntypedServiceImplementation;
    for (const [name, def] of Object.entries(s.definition as Record<string, MethodDefinition>)) {
      const handle = impl[name] as Handle | undefined;
      if (handle) methods.set(def.path, { handle, service: s.name, method: def.path.slice(def.path.lastIndexOf('/') + 1) });
    }
  }
  const inFlight = new Map<number, InProcessServerCall>();
  const reply = (m: ToClient) => port.postMessage(m);
  const onMessage = (m: ToServer) => {
    if (m.t === 'cancel') {
      inFlight.get(m.id)?.cancel();
      inFlight.delete(m.id);
      return;
    }
    const target = methods.get(m.path);
    if (!target) {
      reply({ t: 'reply', id: m.id, ok: false, code: status.UNIMPLEMENTED, details: `${m.path} is not served on this port`, metadata: [] });
      return;
    }
    const metadata = fromWire(m.metadata);
    const server = new InProcessServerCall(m.request, metadata, m.deadline ?? undefined);
    inFlight.set(m.id, server);
    const parent = propagation.extract(context.active(), metadata.getMap(), {
      get: (carrier, key) => {
        const v = (carrier as Record<string, unknown>)[key];
        return typeof v === 'string' ? v : undefined;
      },
      keys: (carrier) => Object.keys(carrier as object),
    });
    const spanName = `grpc.${m.path.slice(1)}`;
    const span = tracer.startSpan(spanName, { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.service': target.service, 'rpc.method': target.method, 'ctxmesh.transport': 'thread' } }, parent);
    context.with(trace.setSpan(parent, span), () => {
      target.handle(server as unknown as ServerUnaryCall<unknown, unknown>, (err, res) => {
        span.setAttribute('rpc.grpc.status_code', err ? (err.code ?? status.UNKNOWN) : status.OK);
        if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.details });
        span.end();
        if (!inFlight.delete(m.id)) return; // cancelled: the caller has its answer
        if (err) reply({ t: 'reply', id: m.id, ok: false, code: err.code ?? status.UNKNOWN, details: err.details ?? '', metadata: err.metadata ? toWire(err.metadata) : [] });
        else reply({ t: 'reply', id: m.id, ok: true, response: res });
      });
    });
  };
  port.on('message', onMessage);
  return () => {
    port.off('message', onMessage);
    for (const c of inFlight.values()) c.cancel();
    inFlight.clear();
  };
}

/**
 * The calling side of a port that {@link serveOverPort} serves: open one {@link Port} per
 * service with {@link ThreadChannel.port}. Calls in flight when the channel closes (or when the
 * serving thread goes away: {@link ThreadChannel.fail}) fail UNAVAILABLE, as a lost gRPC
 * connection does.
 */
export class ThreadChannel {
  private next = 0;
  private readonly pending = new Map<number, (m: ToClient) => void>();
  private closed: string | null = null;

  constructor(private readonly messagePort: MessagePort) {
    messagePort.on('message', (m: ToClient) => {
      const done = this.pending.get(m.id);
      if (!done) return;
      this.pending.delete(m.id);
      done(m);
    });
    // A caller waiting on the other thread must not keep the process alive by itself.
    messagePort.unref();
  }

  /** Fail every call in flight and every later one UNAVAILABLE with `reason`. */
  fail(reason: string): void {
    if (this.closed !== null) return;
    this.closed = reason;
    for (const [id, done] of [...this.pending]) {
      this.pending.delete(id);
      done({ t: 'reply', id, ok: false, code: status.UNAVAILABLE, details: reason, metadata: [] });
    }
  }

  /** Close the port (calls in flight fail UNAVAILABLE). */
  close(): void {
    this.fail('the thread channel is closed');
    this.messagePort.close();
  }

  /** The typed port of a service (its generated definition) served at the other end of this channel. */
  port<C>(definition: object, opts: PortOptions<C>): Port<C> & { close(): void } {
    const methods: Record<string, UnaryMethod<unknown, unknown>> = {};
    for (const [name, def] of Object.entries(definition as Record<string, MethodDefinition>)) {
      methods[name] = this.unary(def.path);
    }
    // The channel is the caller's to close, shared by every service on it.
    return Object.assign(portOver<C>(methods, opts), { close: () => undefined });
  }

  private unary(path: string): UnaryMethod<unknown, unknown> {
    // `/package.Service/Method`
    const rpcService = path.slice(1, path.lastIndexOf('/'));
    const rpcMethod = path.slice(path.lastIndexOf('/') + 1);
    const spanName = `grpc.${path.slice(1)}`;
    return (request, metadata, options, callback) => {
      const span = tracer.startSpan(spanName, { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.service': rpcService, 'rpc.method': rpcMethod, 'ctxmesh.transport': 'thread' } });
      const id = ++this.next;
      const local = startLocalCall(
        span,
        options,
        callback,
        // The serving side learns of it only while it still has the call.
        () => {
          if (this.pending.has(id)) this.messagePort.postMessage({ t: 'cancel', id } satisfies ToServer);
        },
        () => this.pending.delete(id),
      );
      if (local.done) return local.call;
      if (this.closed !== null) {
        local.finish(serviceError(status.UNAVAILABLE, this.closed), undefined);
        return local.call;
      }
      const finish = local.finish;
      const deadline = deadlineMs(options.deadline);
      const md = metadata.clone();
      propagation.inject(trace.setSpan(context.active(), span), md, { set: (carrier, key, value) => (carrier as Metadata).set(key, value) });
      this.pending.set(id, (m) => {
        if (m.ok) finish(null, m.response);
        else finish(serviceError(m.code as status, m.details, fromWire(m.metadata)), undefined);
      });
      this.messagePort.postMessage({ t: 'call', id, path, request, metadata: toWire(md), deadline: Number.isFinite(deadline) ? deadline : null } satisfies ToServer);
      return local.call;
    };
  }
}
