/**
 * In-process calls between services that share a thread: {@link inProcessPort} is the same
 * {@link Port} as {@link grpcPort}, over a transport that hands the request object to the
 * target's grpc-js implementation (what {@link implement} built) instead of framing and encoding
 * it (connect-es' router transport is the model). Everything above and below the wire is the
 * one the gRPC path runs: the client side is {@link callUnary} (the caller's Budget, retries,
 * the deadline-vs-cancel reading, the deliberate translation of downstream codes), and the
 * server side is `implement`'s wrapper (a Budget from the call's deadline, the handler, the error
 * model's conversion to a status with ErrorInfo details, the `observe` metrics hook). What this
 * transport provides is what grpc-js would: the deadline (the caller gets DEADLINE_EXCEEDED when
 * it passes, and the server call is cancelled), cancellation (`cancel()`, and the parent call's
 * cancellation propagating), the `x-request-id` metadata, a client span and a server span named
 * as the gRPC instrumentation names them, and copies of the messages (`structuredClone`), so
 * neither side can change an object the other still holds — gRPC's decoding gives both sides
 * their own objects too.
 *
 * Only for services in the same thread: a call into a worker thread stays on gRPC.
 */
import { Metadata, status, type ServerUnaryCall, type StatusObject, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { UnaryMethod } from './client';
import { portOver, type Port, type PortOptions } from './port';
import type { MountedService } from './server';
import { InProcessServerCall, serviceError, startLocalCall } from './local-call';

const tracer = trace.getTracer('@ctxmesh/rpc');

/** A method of a generated service definition (the fields this transport reads). */
export interface MethodDefinition {
  path: string;
}

/**
 * One RPC of a mounted implementation as a grpc-js-shaped unary method (the 4-argument form
 * {@link callUnary} calls).
 * @param handle the implementation's method (from {@link implement})
 * @param spanName `grpc.<package.Service>/<Method>`, as the OpenTelemetry gRPC instrumentation names its spans
 */
function unaryMethod(handle: (call: ServerUnaryCall<unknown, unknown>, callback: (err: Partial<StatusObject> | null, res?: unknown) => void) => void, spanName: string, rpcService: string, rpcMethod: string): UnaryMethod<unknown, unknown> {
  return (request, metadata, options, callback) => {
    const clientSpan = tracer.startSpan(spanName, { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.service': rpcService, 'rpc.method': rpcMethod, 'ctxmesh.transport': 'in-process' } });
    const spanContext = trace.setSpan(context.active(), clientSpan);
    const server = new InProcessServerCall(structuredClone(request), metadata.clone(), options.deadline);
    const local = startLocalCall(clientSpan, options, callback, () => server.cancel());
    if (local.done) return local.call;
    const finish = local.finish;

    const serverSpan = tracer.startSpan(spanName, { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.service': rpcService, 'rpc.method': rpcMethod, 'ctxmesh.transport': 'in-process' } }, spanContext);
    context.with(trace.setSpan(spanContext, serverSpan), () => {
      handle(server as unknown as ServerUnaryCall<unknown, unknown>, (err, res) => {
        serverSpan.setAttribute('rpc.grpc.status_code', err ? (err.code ?? status.UNKNOWN) : status.OK);
        if (err) serverSpan.setStatus({ code: SpanStatusCode.ERROR, message: err.details });
        serverSpan.end();
        if (err) finish(serviceError(err.code ?? status.UNKNOWN, err.details ?? '', err.metadata ?? new Metadata()), undefined);
        else finish(null, structuredClone(res));
      });
    });
    return local.call;
  };
}

/**
 * The typed port of every RPC of `service` (a service this process mounts, as
 * {@link startServer} takes it), called in process: the same {@link Port} as
 * {@link grpcPort}'s with the same options, for a caller in the same thread.
 * @param service the mounted service (its generated definition and `implement`'s implementation)
 */
export function inProcessPort<C>(service: Pick<MountedService, 'definition' | 'implementation' | 'name'>, opts: PortOptions<C>): Port<C> & { close(): void } {
  const methods: Record<string, UnaryMethod<unknown, unknown>> = {};
  const impl = service.implementation as UntypedServiceImplementation;
  for (const [name, def] of Object.entries(service.definition as Record<string, MethodDefinition>)) {
    const handle = impl[name] as Parameters<typeof unaryMethod>[0] | undefined;
    if (!handle) throw new TypeError(`${service.name} has no implementation of ${name}`);
    methods[name] = unaryMethod(handle, `grpc.${def.path.slice(1)}`, service.name, def.path.slice(def.path.lastIndexOf('/') + 1));
  }
  // Nothing to close: no channel.
  return Object.assign(portOver<C>(methods, opts), { close: () => undefined });
}
