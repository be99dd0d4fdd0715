import { common, type orchestrator } from '@ctxmesh/proto';
import { Budget, Code, type CallContext } from '@ctxmesh/rpc';
import { Metadata } from '@grpc/grpc-js';
import pino from 'pino';
import { traceToStored, type TraceRecord, type TraceSink } from '../domain/trace';
import type { HandlerEnv } from './env';
import { getTraceHandler } from './get-trace';

const ctx = (): CallContext => ({ budget: Budget.ofMs(5000), log: pino({ level: 'silent' }), metadata: new Metadata(), requestId: 'r' });
const who = (userId: string, role = common.Role.ROLE_USER, accountId = 'acme'): common.Identity => ({ accountId, userId, role, actorPeerId: '', workspace: '', requestId: '' });

const TRACE: orchestrator.RetrievalTrace = {
  traceId: 'tr_1',
  createdAtMs: 1_750_000_000_000,
  requestId: 'req-1',
  user: 'alice',
  workspace: 'default',
  query: 'q',
  plannedQueries: ['q'],
  params: undefined,
  stages: [],
  degradedStages: [],
  candidates: [],
  dropped: [],
  result: undefined,
};

class Sink implements TraceSink {
  rows: TraceRecord[] = [{ id: 'tr_1', account: 'acme', createdAt: TRACE.createdAtMs, data: traceToStored(TRACE) }];
  async append(row: TraceRecord) {
    this.rows.push(row);
  }
  async get(id: string, account: string) {
    return this.rows.find((r) => r.id === id && r.account === account) ?? null;
  }
}

describe('getTraceHandler', () => {
  const get = (traces: TraceSink | null) => getTraceHandler({ traces } as HandlerEnv);

  it('answers the trace to the user who made the request and to an admin of the account', async () => {
    await expect(get(new Sink())({ identity: who('alice'), traceId: 'tr_1' }, ctx())).resolves.toEqual({ trace: TRACE });
    await expect(get(new Sink())({ identity: who('carol', common.Role.ROLE_ADMIN), traceId: 'tr_1' }, ctx())).resolves.toEqual({ trace: TRACE });
  });

  it('answers NOT_FOUND for another user, another account, an unknown id, and without a store', async () => {
    for (const [traces, identity, id] of [
      [new Sink(), who('bob'), 'tr_1'],
      [new Sink(), who('alice', common.Role.ROLE_USER, 'globex'), 'tr_1'],
      [new Sink(), who('alice'), 'tr_2'],
      [null, who('alice'), 'tr_1'],
    ] as const) {
      await expect(get(traces)({ identity, traceId: id }, ctx())).rejects.toMatchObject({ code: Code.NOT_FOUND, reason: 'TRACE_NOT_FOUND', metadata: { trace_id: id } });
    }
  });

  it('refuses a request without an account or with a malformed id', async () => {
    await expect(get(new Sink())({ identity: undefined, traceId: 'tr_1' }, ctx())).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY' });
    await expect(get(new Sink())({ identity: who('alice'), traceId: 'bad id!' }, ctx())).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_TRACE_ID' });
  });
});
