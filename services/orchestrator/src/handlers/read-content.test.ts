import { Budget, Code, type CallContext } from '@ctxmesh/rpc';
import pino from 'pino';
import { Metadata } from '@grpc/grpc-js';
import type { Ports } from '../domain/ports';
import type { HandlerEnv } from './env';
import { readContentHandler } from './read-content';

const ctx = (): CallContext => ({ budget: Budget.ofMs(5000), log: pino({ level: 'silent' }), metadata: new Metadata(), requestId: 'r' });

describe('readContentHandler', () => {
  it('reads the tier through the tier-reader, and refuses another tier before calling it', async () => {
    const calls: unknown[] = [];
    const env = {
      ports: { tierReader: { readContent: async (req: unknown) => (calls.push(req), { text: 'body', contentHash: 'h', isDirectory: false }) } } as unknown as Ports,
    } as HandlerEnv;
    const read = readContentHandler(env);
    await expect(read({ identity: undefined, uri: 'viking://resources/a.md', tier: 'overview' }, ctx())).resolves.toEqual({ text: 'body' });
    expect(calls).toEqual([{ identity: undefined, uri: 'viking://resources/a.md', tier: 'overview' }]);
    await expect(read({ identity: undefined, uri: 'viking://resources/a.md', tier: 'full' }, ctx())).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_TIER' });
    expect(calls).toHaveLength(1);
  });
});
