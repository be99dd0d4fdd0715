/**
 * grpcPort over real gRPC on port 0: one typed method per RPC of the generated client, each a
 * callUnary under the caller's Budget with the port's pass list, per-method and per-request
 * options, and the request id it sends.
 */
import { status } from '@grpc/grpc-js';
import { common, ledger } from '@ctxmesh/proto';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { Budget, CtxError, grpcPort, implement, type Handlers, type Port } from '../src';

const log = pino({ level: 'silent' });
const identity = (requestId: string): common.Identity => ({ accountId: 'a', userId: 'u', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId });

let srv: TestServer;
const seen: Array<{ rpc: string; requestId: string }> = [];
let beginTurn: Handlers<ledger.LedgerServiceServer>['beginTurn'] = async () => ({ status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] });

beforeAll(async () => {
  srv = await startTestServer([
    {
      name: 'ctxmesh.ledger.v1.LedgerService',
      definition: ledger.LedgerServiceService,
      implementation: implement<ledger.LedgerServiceServer>(
        ledger.LedgerServiceService,
        {
          beginTurn: (req, ctx) => {
            seen.push({ rpc: 'beginTurn', requestId: String(ctx.metadata.get('x-request-id')[0] ?? '') });
            return beginTurn(req, ctx);
          },
          recordServed: async (_req, ctx) => {
            seen.push({ rpc: 'recordServed', requestId: String(ctx.metadata.get('x-request-id')[0] ?? '') });
            return { status: 'ok' };
          },
        },
        { domain: 'ledger', log },
      ),
    },
  ]);
});
afterAll(async () => {
  await srv.close();
});
beforeEach(() => {
  seen.length = 0;
  beginTurn = async () => ({ status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] });
});

describe('grpcPort', () => {
  it('grpcPort - every RPC of the client - typed methods answering through the server', async () => {
    const port: Port<ledger.LedgerServiceClient> & { close(): void } = grpcPort(ledger.LedgerServiceClient, srv.address, { domain: 'ledger' });
    try {
      expect(Object.keys(port).sort()).toEqual(['beginTurn', 'close', 'recordServed']);
      const budget = Budget.ofMs(5000, { requestId: 'from-budget' });
      await expect(port.beginTurn({ identity: identity('from-identity'), sessionId: 's', dedupTurns: 1 }, budget)).resolves.toEqual({ status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] });
      await expect(port.recordServed({ identity: identity(''), sessionId: 's', dedupTurns: 1, turn: 1, entries: [] }, budget)).resolves.toEqual({ status: 'ok' });
      // Without requestIdFromIdentity the budget's request id travels.
      expect(seen).toEqual([
        { rpc: 'beginTurn', requestId: 'from-budget' },
        { rpc: 'recordServed', requestId: 'from-budget' },
      ]);
    } finally {
      port.close();
    }
  });

  it('grpcPort - requestIdFromIdentity - the identity\'s request id, else the budget\'s', async () => {
    const port = grpcPort(ledger.LedgerServiceClient, srv.address, { domain: 'ledger', requestIdFromIdentity: true });
    try {
      const budget = Budget.ofMs(5000, { requestId: 'from-budget' });
      await port.beginTurn({ identity: identity('from-identity'), sessionId: 's', dedupTurns: 1 }, budget);
      await port.beginTurn({ identity: identity(''), sessionId: 's', dedupTurns: 1 }, budget);
      expect(seen.map((s) => s.requestId)).toEqual(['from-identity', 'from-budget']);
    } finally {
      port.close();
    }
  });

  it('grpcPort - a downstream INVALID_ARGUMENT - INTERNAL unless the port passes it, per method', async () => {
    beginTurn = async () => {
      throw new CtxError(status.INVALID_ARGUMENT, 'BAD_SESSION', 'bad session id');
    };
    const strict = grpcPort(ledger.LedgerServiceClient, srv.address, { domain: 'ledger' });
    const passing = grpcPort(ledger.LedgerServiceClient, srv.address, { domain: 'ledger', methods: { beginTurn: { pass: [status.INVALID_ARGUMENT] } } });
    try {
      const req = { identity: identity('r'), sessionId: 's', dedupTurns: 1 };
      await expect(strict.beginTurn(req, Budget.ofMs(5000))).rejects.toMatchObject({ code: status.INTERNAL, message: 'ledger failed' });
      await expect(passing.beginTurn(req, Budget.ofMs(5000))).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, reason: 'BAD_SESSION', message: 'bad session id' });
    } finally {
      strict.close();
      passing.close();
    }
  });

  it('grpcPort - per-request options - a request that must not run twice is not retried on UNAVAILABLE', async () => {
    let calls = 0;
    beginTurn = async () => {
      calls += 1;
      throw new CtxError(status.UNAVAILABLE, 'DOWN', 'down');
    };
    const port = grpcPort(ledger.LedgerServiceClient, srv.address, {
      domain: 'ledger',
      defaults: { retry: true },
      methods: { beginTurn: (req) => ({ retry: req.sessionId === '' }) },
    });
    try {
      await expect(port.beginTurn({ identity: identity('r'), sessionId: 's', dedupTurns: 1 }, Budget.ofMs(5000))).rejects.toMatchObject({ code: status.UNAVAILABLE });
      expect(calls).toBe(1);
      await expect(port.beginTurn({ identity: identity('r'), sessionId: '', dedupTurns: 1 }, Budget.ofMs(5000))).rejects.toMatchObject({ code: status.UNAVAILABLE });
      expect(calls).toBe(1 + 4);
    } finally {
      port.close();
    }
  });
});
