/** An `AssembleContextRequest` as the gateway sends it for a plain flat request (`what shipped`, 1600 tokens). */
import type { orchestrator } from '@ctxmesh/proto';

/** The default other-peer penalties, all seven categories in order. */
export const PENALTIES = ['events', 'entities', 'preferences', 'experiences', 'resources', 'skills', 'memories'].map((name) => ({
  name,
  value: ['events', 'entities', 'memories'].includes(name) ? 0.1 : 0.02,
}));

/** The request, with `over` laid on top. */
export function contextRequest(over: Partial<orchestrator.AssembleContextRequest> = {}): orchestrator.AssembleContextRequest {
  return {
    identity: { accountId: 'default', userId: 'default', role: 3, actorPeerId: '', workspace: '', requestId: 'r1' },
    query: 'what shipped',
    imageUrl: '',
    filter: undefined,
    limit: 10,
    scoreThreshold: undefined,
    sessionId: '',
    queryExpansion: 'auto',
    maxTokens: 1600,
    bucketed: false,
    quotas: [],
    purpose: '',
    detail: undefined,
    dedupTurns: 0,
    excludeUris: [],
    peerScope: 'all',
    otherPeerPenalties: PENALTIES,
    rewrite: 'off',
    rewriteMaxBullets: 6,
    tokenizer: '',
    asOfMs: undefined,
    timeBudgetMs: 0,
    stages: [],
    codeOutline: true,
    packing: '',
    explain: false,
    ...over,
  };
}
