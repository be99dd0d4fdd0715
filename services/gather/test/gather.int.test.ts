/** gather over real gRPC on port 0, on the real embedded store seeded through replaceDocument. */
import { common, gather } from '@ctxmesh/proto';
import { Budget, callUnary, checkHealth, Code, connect, CtxError } from '@ctxmesh/rpc';
import { EmbeddedVectorIndex, openEmbeddedDb, type EmbeddedDb, type SearchQuery, type VectorIndex } from '@ctxmesh/stores';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import type { LexicalEmbedder } from '@ctxmesh/embedder';
import pino from 'pino';
import { createServer, gatherReady } from '../src';
import { ALICE, CAROL, EXPIRED_AT, seedCorpus } from './corpus';

let db: EmbeddedDb;
let index: EmbeddedVectorIndex;
let embedder: LexicalEmbedder;
let srv: TestServer;
let client: gather.GatherServiceClient;

beforeAll(async () => {
  db = openEmbeddedDb(':memory:');
  index = new EmbeddedVectorIndex(db, { dimension: 256 });
  embedder = await seedCorpus(index);
  srv = await startTestServer([createServer({ index, embedder, log: pino({ level: 'silent' }) })], { checkReady: () => gatherReady(index) });
  client = connect(gather.GatherServiceClient, srv.address);
});
afterAll(async () => {
  client.close();
  await srv.close();
  await index.close();
  db.close();
});

const PASS = [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED, Code.UNIMPLEMENTED];
function rpc<Req, Res>(m: (r: Req, md: never, o: never, cb: never) => unknown, req: Req): Promise<Res> {
  return callUnary(m.bind(client) as never, req, Budget.ofMs(10_000), { domain: 'gather', pass: PASS }) as Promise<Res>;
}

function identity(over: Partial<common.Identity> = {}): common.Identity {
  return { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '', ...over };
}

function findReq(over: Partial<gather.FindRequest> = {}): gather.FindRequest {
  return { identity: identity(), queries: [], imageUrl: '', targetUris: [], filter: undefined, limit: 10, levels: [], asOfMs: undefined, ...over };
}
/** `{op:"must", field, conds:[…strings]}` on the wire. */
const must = (field: string, ...values: string[]): common.FilterNode => ({
  node: { $case: 'must', value: { field, values: values.map((v) => ({ kind: { $case: 'text' as const, value: v } })) } },
});
const find = (over: Partial<gather.FindRequest>) => rpc<gather.FindRequest, gather.FindResponse>(client.find, findReq(over));
const all = (r: gather.FindResponse) => [...r.memories, ...r.resources, ...r.skills];
const uris = (r: gather.FindResponse) => all(r).map((h) => h.uri);

function gcReq(over: Partial<gather.GatherCandidatesRequest> = {}): gather.GatherCandidatesRequest {
  return {
    identity: identity(),
    queries: [],
    imageUrl: '',
    filter: undefined,
    limit: 10,
    bucketed: false,
    quotas: [],
    peerScope: 'all',
    otherPeerPenalties: [],
    excludedUris: [],
    asOfMs: undefined,
    packing: '',
    maxTokens: 0,
    tokenizer: '',
    explain: false,
    cooledUris: [],
    ...over,
  };
}
const gatherCandidates = (over: Partial<gather.GatherCandidatesRequest>) =>
  rpc<gather.GatherCandidatesRequest, gather.GatherCandidatesResponse>(client.gatherCandidates, gcReq(over));

const LAUNCH = `${ALICE}/memories/events/2026/07/14/launch.md`;

describe('GatherService', () => {
  it('Gather health - index answers ping - SERVING', async () => {
    await expect(checkHealth(srv.address, '')).resolves.toBe(true);
  });

  describe('Find', () => {
    it('Gather.Find - English near-verbatim query - the memory first, calibrated well above 0.35, list-hit shape', async () => {
      const r = await find({ queries: ['shipped the stdio MCP proxy'] });
      expect(r.memories[0]).toMatchObject({ uri: LAUNCH, contextType: 'memory', level: 2, category: 'events', docUri: '' });
      expect(r.memories[0].score).toBeGreaterThan(0.5);
      expect(r.memories[0].score).toBeLessThanOrEqual(1);
      // Memory abstracts are the whole visible body, metadata comment stripped.
      expect(r.memories[0].abstract).toBe('# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter');
    });

    it('Gather.Find - Chinese queries - the Chinese memory and resource first', async () => {
      const food = await find({ queries: ['四川火锅'] });
      expect(food.memories[0].uri).toBe(`${ALICE}/memories/preferences/饮食.md`);
      expect(food.memories[0].score).toBeGreaterThan(0.35);
      const db = await find({ queries: ['向量数据库的混合检索'] });
      expect(db.resources[0].uri).toBe('viking://resources/中文/数据库.md');
      expect(db.resources[0].score).toBeGreaterThan(0.35);
    });

    it('Gather.Find - unrelated query with score_threshold 0.35 - nothing passes, while without it low scores come back', async () => {
      const loose = await find({ queries: ['quantum chromodynamics lattice'] });
      for (const h of all(loose)) expect(h.score).toBeLessThan(0.35);
      const strict = await find({ queries: ['quantum chromodynamics lattice'], scoreThreshold: 0.35 });
      expect(all(strict)).toEqual([]);
      const kept = await find({ queries: ['四川火锅'], scoreThreshold: 0.35 });
      expect(uris(kept)).toContain(`${ALICE}/memories/preferences/饮食.md`);
    });

    it('Gather.Find - buckets by context type, best first - memories, resources and skills', async () => {
      const r = await find({ queries: ['deploy Kubernetes kustomize', 'search API reference'], limit: 20 });
      expect(r.skills.map((h) => h.uri)).toContain('viking://agent/skills/deploy.md');
      expect(r.resources.map((h) => h.uri)).toContain('viking://resources/docs/api.md');
      for (const list of [r.memories, r.resources, r.skills]) {
        for (let i = 1; i < list.length; i++) expect(list[i - 1].score).toBeGreaterThanOrEqual(list[i].score);
      }
      expect(new Set(r.skills.map((h) => h.contextType))).toEqual(new Set(['skill']));
    });

    it('Gather.Find - several queries - merged by URI with the best score', async () => {
      const one = await find({ queries: ['deploy Kubernetes kustomize'] });
      const both = await find({ queries: ['gardening compost', 'deploy Kubernetes kustomize'] });
      const skill = (r: gather.FindResponse) => r.skills.find((h) => h.uri === 'viking://agent/skills/deploy.md');
      expect(skill(both)?.score).toBeCloseTo(skill(one)?.score as number, 10);
      expect(uris(both).filter((u) => u === 'viking://agent/skills/deploy.md')).toHaveLength(1);
    });

    it('Gather.Find - query matching a late passage - the document, not the passage, with the document abstract', async () => {
      const r = await find({ queries: ['zebra migration Serengeti'] });
      expect(r.resources[0].uri).toBe('viking://resources/guide/handbook.md');
      expect(r.resources[0].abstract).toBe('A practical handbook for the allotment, season by season.');
      expect(uris(r).some((u) => u.includes('#p'))).toBe(false);
    });

    it('Gather.Find - explicit targets - only nodes under them', async () => {
      const r = await find({ queries: ['search API reference documentation'], targetUris: ['viking://resources/docs'] });
      expect(uris(r).length).toBeGreaterThan(0);
      for (const u of uris(r)) expect(u.startsWith('viking://resources/docs/')).toBe(true);
    });

    it('Gather.Find - levels - sidecars by level, files excluded', async () => {
      const docs = { queries: ['search API documentation reference'], targetUris: ['viking://resources/docs'] };
      const l0 = await find({ ...docs, levels: [0] });
      expect(uris(l0)).toEqual(['viking://resources/docs/.abstract.md']);
      expect(all(l0)[0].level).toBe(0);
      const l1 = await find({ ...docs, levels: [1] });
      expect(uris(l1)).toEqual(['viking://resources/docs/.overview.md']);
      expect(all(l1)[0].overview).toBe('# Docs\nReference pages for the HTTP search API.');
      const l2 = await find({ ...docs, levels: [2] });
      expect(uris(l2)).toEqual(['viking://resources/docs/api.md']);
    });

    it('Gather.Find - filters (context type, tags) - only matching nodes', async () => {
      const skills = await find({ queries: ['deploy the service'], filter: must('context_type', 'skill') });
      expect(uris(skills)).toEqual(['viking://agent/skills/deploy.md']);
      const tagged = await find({ queries: ['restart ingest workers runbook'], filter: must('search_tags', 'env=prod') });
      expect(uris(tagged)).toEqual(['viking://resources/ops/runbook.md']);
      expect(all(tagged)[0].tags).toEqual(['env=prod', 'team=search']);
    });

    it('Gather.Find - bad filter - INVALID_ARGUMENT BAD_FILTER', async () => {
      await expect(find({ queries: ['x'], filter: must('colour', 'red') })).rejects.toMatchObject({
        code: Code.INVALID_ARGUMENT,
        reason: 'BAD_FILTER',
      });
    });

    it('Gather.Find - as_of - expired facts only at an instant when they were valid', async () => {
      const q = { queries: ['retired on-call policy page the whole team'] };
      expect(uris(await find(q))).not.toContain('viking://resources/ops/old-policy.md');
      const past = await find({ ...q, asOfMs: EXPIRED_AT - 86_400_000 });
      expect(past.resources[0].uri).toBe('viking://resources/ops/old-policy.md');
    });

    it('Gather.Find - same user id in another account, and another user - never visible', async () => {
      const r = await find({ queries: ['shipped the stdio MCP proxy'], limit: 50 });
      expect(uris(r)).not.toContain(`${ALICE}/memories/events/2026/07/14/launch-globex.md`);
      const secret = await find({ queries: ['secret rocket launch plan'], limit: 50 });
      expect(uris(secret).some((u) => u.startsWith(CAROL))).toBe(false);
      // And globex's alice sees only globex.
      const other = await find({ identity: identity({ accountId: 'globex' }), queries: ['shipped the stdio MCP proxy'], limit: 50 });
      expect(uris(other)).toEqual([`${ALICE}/memories/events/2026/07/14/launch-globex.md`]);
    });

    it('Gather.Find - peers without and with an actor peer - only the actor peer is visible', async () => {
      const q = { queries: ['hiking in the Alps'], limit: 50 };
      const none = await find(q);
      expect(uris(none).some((u) => u.includes('/peers/'))).toBe(false);
      const asBob = await find({ ...q, identity: identity({ actorPeerId: 'bob' }) });
      expect(uris(asBob)).toContain(`${ALICE}/peers/bob/memories/events/trip.md`);
      expect(uris(asBob)).not.toContain(`${ALICE}/peers/dave/memories/events/hike.md`);
      // Naming the caller's own peers root explicitly (no actor peer) opens them.
      const named = await find({ ...q, targetUris: [`${ALICE}/peers`] });
      expect(uris(named).sort()).toEqual([`${ALICE}/peers/bob/memories/events/trip.md`, `${ALICE}/peers/dave/memories/events/hike.md`]);
    });

    it('Gather.Find - target under another user for a plain user - PERMISSION_DENIED "Access denied"', async () => {
      const err = await find({ queries: ['rocket launch'], targetUris: [`${CAROL}/memories`] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CtxError);
      expect(err).toMatchObject({ code: Code.PERMISSION_DENIED, reason: 'ACCESS_DENIED' });
      expect((err as Error).message).toContain('Access denied');
    });

    it('Gather.Find - root targeting another user - that user’s nodes, and none without the target', async () => {
      const root = identity({ role: common.Role.ROLE_ROOT });
      const targeted = await find({ identity: root, queries: ['secret rocket launch plan'], targetUris: [CAROL] });
      expect(uris(targeted)).toEqual([`${CAROL}/memories/events/secret.md`]);
      const flat = await find({ identity: root, queries: ['secret rocket launch plan'], limit: 50 });
      expect(uris(flat).some((u) => u.startsWith(CAROL))).toBe(false);
    });

    it('Gather.Find - blank query without image - INVALID_ARGUMENT EMPTY_QUERY with the contract message', async () => {
      await expect(find({ queries: ['  '] })).rejects.toMatchObject({
        code: Code.INVALID_ARGUMENT,
        reason: 'EMPTY_QUERY',
        message: 'Search query or image_url must not be empty.',
      });
    });

    it('Gather.Find - image only - INVALID_ARGUMENT IMAGE_QUERY_UNSUPPORTED naming the text-only embedder', async () => {
      const err = await find({ queries: [''], imageUrl: 'data:image/png;base64,iVBORw0KGgo=' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'IMAGE_QUERY_UNSUPPORTED' });
      expect((err as Error).message).toContain('(lexical-v1-d256) is text-only');
    });

    it('Gather.Find - text and image - the text is searched', async () => {
      const r = await find({ queries: ['四川火锅'], imageUrl: 'https://example.com/hotpot.png' });
      expect(r.memories[0].uri).toBe(`${ALICE}/memories/preferences/饮食.md`);
    });

    it('Gather.Find - missing identity - INVALID_ARGUMENT', async () => {
      await expect(rpc(client.find, { ...findReq({ queries: ['x'] }), identity: undefined })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY' });
    });
  });

  describe('GatherCandidates', () => {
    it('Gather.GatherCandidates - packing evidence - a pool sized by the budget with its floor and fates; unknown packing - INVALID_ARGUMENT', async () => {
      const quotas = [{ name: 'events', count: 1 }, { name: 'resources', count: 1 }];
      const compat = await gatherCandidates({ queries: ['shipped the stdio MCP proxy'], peerScope: 'actor', bucketed: true, quotas });
      const r = await gatherCandidates({ queries: ['shipped the stdio MCP proxy'], peerScope: 'actor', bucketed: true, quotas, packing: 'evidence', maxTokens: 1600, explain: true });
      // 1600 tokens over 40 a row.
      expect(r.evidence!.widths[0]).toBe(40);
      // A best at the noise floor (0.35) opens the block: the floor is then the evidence floor (0.12) or a quarter of the best.
      const best = r.evidence!.bestScore!;
      expect(r.evidence!.relevanceFloor).toBe(best >= 0.35 ? Math.max(0.12, best / 4) : 0.35);
      for (const c of r.candidates) expect(c.rankedScore).toBeGreaterThanOrEqual(r.evidence!.relevanceFloor!);
      // Compat's quota of one per bucket is a prior: the pool holds at least what compat gathered above the floor.
      const pool = new Set(r.candidates.map((c) => c.uri));
      for (const c of compat.candidates) if (c.rankedScore >= r.evidence!.relevanceFloor!) expect(pool.has(c.uri)).toBe(true);
      for (const f of r.fates) expect(['cooled', 'excluded', 'noise_floor', 'relevance_floor', 'quota']).toContain(f.fate);
      expect(r.fates.length).toBe(r.evidence!.belowFloor);
      // Compat never reports evidence, and fates only when asked.
      expect(compat.evidence).toBeUndefined();
      expect(compat.fates).toEqual([]);
      await expect(gatherCandidates({ queries: ['x'], packing: 'greedy' })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'UNKNOWN_PACKING' });
    });

    it('Gather.GatherCandidates - flat mode - candidates with categories, origins and searched.all', async () => {
      const r = await gatherCandidates({ queries: ['shipped the stdio MCP proxy'], peerScope: 'actor' });
      expect(r.candidates[0]).toMatchObject({ uri: LAUNCH, category: 'events', origin: 'self', isDirectory: false, openContext: false });
      expect(r.candidates[0].abstract).toContain('Shipped the stdio MCP proxy.');
      expect(r.candidates[0].rankedScore).toBe(r.candidates[0].score);
      expect(r.searched.map((s) => s.name)).toEqual(['all']);
      expect(r.searched[0].count).toBeGreaterThanOrEqual(r.candidates.length);
      expect(r.candidates.length).toBeLessThanOrEqual(10);
      expect(r.retrievalErrors).toEqual([]);
      // profile.md is never a candidate.
      expect(r.candidates.some((c) => c.uri.endsWith('/profile.md'))).toBe(false);
    });

    it('Gather.GatherCandidates - peer scan without actor peer - other peers’ memories, penalised, read with the open context', async () => {
      const r = await gatherCandidates({ queries: ['hiking in the Alps'], otherPeerPenalties: [{ name: 'events', value: 0.25 }] });
      const bob = r.candidates.find((c) => c.uri === `${ALICE}/peers/bob/memories/events/trip.md`);
      expect(bob).toMatchObject({ origin: 'other_peer', openContext: true, category: 'events' });
      expect(bob!.rankedScore).toBeCloseTo(bob!.score - 0.25, 10);
    });

    it('Gather.GatherCandidates - actor peer bob - bob is actor_peer, dave other_peer from the scan', async () => {
      const r = await gatherCandidates({ identity: identity({ actorPeerId: 'bob' }), queries: ['hiking in the Alps'] });
      const byUri = new Map(r.candidates.map((c) => [c.uri, c]));
      expect(byUri.get(`${ALICE}/peers/bob/memories/events/trip.md`)).toMatchObject({ origin: 'actor_peer', openContext: false });
      expect(byUri.get(`${ALICE}/peers/dave/memories/events/hike.md`)).toMatchObject({ origin: 'other_peer', openContext: true });
    });

    it('Gather.GatherCandidates - peer_scope actor - other peers never appear', async () => {
      const r = await gatherCandidates({ identity: identity({ actorPeerId: 'bob' }), queries: ['hiking in the Alps'], peerScope: 'actor' });
      expect(r.candidates.some((c) => c.uri.includes('/peers/dave/'))).toBe(false);
    });

    it('Gather.GatherCandidates - bucketed quotas - each bucket its own category, searched per bucket, quota respected', async () => {
      const r = await gatherCandidates({
        queries: ['Shipped proxy TypeScript strict search API deploy'],
        bucketed: true,
        quotas: [
          { name: 'events', count: 1 },
          { name: 'preferences', count: 1 },
          { name: 'resources', count: 2 },
          { name: 'skills', count: 1 },
          { name: 'entities', count: 0 },
        ],
        peerScope: 'actor',
      });
      expect(r.searched.map((s) => s.name).sort()).toEqual(['events', 'preferences', 'resources', 'skills']);
      const cats = r.candidates.map((c) => c.category);
      expect(cats.filter((c) => c === 'events')).toHaveLength(1);
      expect(cats.filter((c) => c === 'preferences').length).toBeLessThanOrEqual(1);
      expect(cats.filter((c) => c === 'resources').length).toBeLessThanOrEqual(2);
      expect(r.candidates.find((c) => c.category === 'events')?.uri).toBe(LAUNCH);
      expect(r.candidates.find((c) => c.category === 'skills')?.uri).toBe('viking://agent/skills/deploy.md');
    });

    it('Gather.GatherCandidates - explicit empty quotas - no candidates and no rejection of a blank query', async () => {
      const r = await gatherCandidates({ queries: [''], bucketed: true, quotas: [] });
      expect(r).toEqual({ candidates: [], searched: [], excluded: 0, retrievalErrors: [], evidence: undefined, fates: [] });
    });

    it('Gather.GatherCandidates - directory sidecar hits - the directory as a candidate', async () => {
      const r = await gatherCandidates({ queries: ['documentation of the HTTP search API reference pages'], peerScope: 'actor' });
      const dir = r.candidates.filter((c) => c.uri === 'viking://resources/docs');
      expect(dir.length).toBeGreaterThan(0);
      expect(dir.every((c) => c.isDirectory && c.category === 'resources')).toBe(true);
    });

    it('Gather.GatherCandidates - excluded URI - dropped and counted, others fall through', async () => {
      const base = await gatherCandidates({ queries: ['shipped the stdio MCP proxy'], peerScope: 'actor', limit: 3 });
      const r = await gatherCandidates({ queries: ['shipped the stdio MCP proxy'], peerScope: 'actor', limit: 3, excludedUris: [LAUNCH] });
      expect(r.candidates.map((c) => c.uri)).not.toContain(LAUNCH);
      expect(r.excluded).toBe(1);
      expect(r.candidates).toHaveLength(base.candidates.length);
    });

    it('Gather.GatherCandidates - a long document’s passages - one candidate for the document', async () => {
      const r = await gatherCandidates({ queries: ['zebra migration Serengeti'], peerScope: 'actor' });
      expect(r.candidates[0].uri).toBe('viking://resources/guide/handbook.md');
      expect(r.candidates.filter((c) => c.uri.startsWith('viking://resources/guide/handbook.md'))).toHaveLength(1);
    });

    it('Gather.GatherCandidates - blank query in flat mode - INVALID_ARGUMENT EMPTY_QUERY', async () => {
      await expect(gatherCandidates({ queries: [''] })).rejects.toMatchObject({
        code: Code.INVALID_ARGUMENT,
        reason: 'EMPTY_QUERY',
        message: 'Search query or image_url must not be empty.',
      });
    });

    it('Gather.GatherCandidates - image only - INVALID_ARGUMENT IMAGE_QUERY_UNSUPPORTED', async () => {
      await expect(gatherCandidates({ queries: [''], imageUrl: 'viking://resources/pic.png' })).rejects.toMatchObject({
        code: Code.INVALID_ARGUMENT,
        reason: 'IMAGE_QUERY_UNSUPPORTED',
      });
    });

    it('Gather.GatherCandidates - bucketed request with a peer scan - one store search batch for all its retrieval calls', async () => {
      const batches: number[] = [];
      const counting: VectorIndex = Object.assign(Object.create(index) as VectorIndex, {
        search: (qs: SearchQuery[]) => {
          batches.push(qs.length);
          return index.search(qs);
        },
      });
      const s2 = await startTestServer([createServer({ index: counting, embedder, log: pino({ level: 'silent' }) })]);
      const c2 = connect(gather.GatherServiceClient, s2.address);
      try {
        const res = (await callUnary(
          c2.gatherCandidates.bind(c2) as never,
          gcReq({
            identity: identity({ actorPeerId: 'bob' }),
            queries: ['hiking', 'deploy'],
            bucketed: true,
            quotas: [
              { name: 'events', count: 2 },
              { name: 'resources', count: 1 },
              { name: 'skills', count: 1 },
            ],
          }),
          Budget.ofMs(10_000),
          { domain: 'gather' },
        )) as gather.GatherCandidatesResponse;
        // Per query: events 2 targets + 1 peer scan, resources 3 targets, skills 2 targets.
        expect(batches).toEqual([16]);
        expect(res.candidates.find((c) => c.category === 'skills')?.uri).toBe('viking://agent/skills/deploy.md');
      } finally {
        c2.close();
        await s2.close();
      }
    });

    it('Gather.GatherCandidates - another account - nothing of acme', async () => {
      const r = await gatherCandidates({ identity: identity({ accountId: 'globex' }), queries: ['Search API deploy hiking proxy'] });
      expect(r.candidates.map((c) => c.uri)).toEqual([`${ALICE}/memories/events/2026/07/14/launch-globex.md`]);
    });
  });
});
