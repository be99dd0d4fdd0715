/**
 * Health probes of other services (gateway /ready, readiness of a service on its
 * downstreams) over the standard gRPC health protocol.
 */
import { credentials, makeGenericClientConstructor, type Client } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

type HealthClient = Client & {
  check(
    req: { service: string },
    opts: { deadline: Date },
    cb: (err: Error | null, res?: { status: string | number }) => void,
  ): void;
};

const HealthClientCtor = makeGenericClientConstructor(healthService, 'grpc.health.v1.Health') as unknown as new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => HealthClient;

const clients = new Map<string, HealthClient>();

/**
 * Ask `address` for the status of `service` ('' = readiness, 'liveness').
 * @returns true when SERVING within `timeoutMs`
 */
export function checkHealth(address: string, service = '', timeoutMs = 1000): Promise<boolean> {
  let c = clients.get(address);
  if (!c) {
    c = new HealthClientCtor(address, credentials.createInsecure());
    clients.set(address, c);
  }
  const client = c;
  return new Promise((resolve) => {
    client.check({ service }, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
      resolve(!err && (res?.status === 'SERVING' || res?.status === 1));
    });
  });
}

/** Close cached health clients (tests, shutdown). */
export function closeHealthClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}
