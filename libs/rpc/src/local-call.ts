/**
 * The call objects of the local transports ({@link inProcessPort} in one thread, the thread
 * transport across worker threads): what grpc-js presents to `implement` on the server side and
 * to `callUnary` on the client side, without a channel.
 */
import { EventEmitter } from 'node:events';
import { Metadata, status, type CallOptions, type ServiceError } from '@grpc/grpc-js';

/** The server side of one in-process call, as grpc-js's ServerUnaryCall presents it to `implement`. */
export class InProcessServerCall extends EventEmitter {
  cancelled = false;
  constructor(
    readonly request: unknown,
    readonly metadata: Metadata,
    private readonly deadline: Date | number | undefined,
  ) {
    super();
  }

  getDeadline(): Date | number {
    return this.deadline ?? Infinity;
  }

  getPeer(): string {
    return 'in-process';
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled', 'cancelled');
  }
}

/** The client side of one in-process call, as grpc-js's ClientUnaryCall presents it to `callUnary`. */
export class InProcessClientCall extends EventEmitter {
  constructor(private readonly onCancel: () => void) {
    super();
  }

  cancel(): void {
    this.onCancel();
  }

  getPeer(): string {
    return 'in-process';
  }
}

export function serviceError(code: status, details: string, metadata: Metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata });
}

export function deadlineMs(deadline: CallOptions['deadline'] | undefined): number {
  if (deadline === undefined) return Infinity;
  return deadline instanceof Date ? deadline.getTime() : Number(deadline);
}

