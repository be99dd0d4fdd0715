/** tier-reader over real gRPC on port 0, on the real embedded store seeded through replaceDocument. */
import { detailToWire } from '@ctxmesh/kernel';
import { createOutliner } from '@ctxmesh/outline';
import { common, tierReader } from '@ctxmesh/proto';
import { Budget, callUnary, checkHealth, Code, connect } from '@ctxmesh/rpc';
import { EmbeddedVectorIndex, openEmbeddedDb, type EmbeddedDb, type FieldSet, type VectorIndex, type Visibility } from '@ctxmesh/stores';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { createServer, tierReaderReady } from '../src';
import { ALICE, CAROL, CODE, EVENT, EVENT_BODY, LONG, longGuide, seedCorpus } from './corpus';

let db: EmbeddedDb;
let index: EmbeddedVectorIndex;
let srv: TestServer;
let client: tierReader.TierReaderServiceClient;
/** URIs asked of the store's `get`, per call. */
const gets: string[][] = [];

beforeAll(async () => {
  db = openEmbeddedDb(':memory:');
  index = new EmbeddedVectorIndex(db, { dimension: 64 });
  await seedCorpus(index);
  // Count the store's reads: the tier reader must fetch only what §5.4 says.
  const counting: VectorIndex = Object.assign(Object.create(index) as VectorIndex, {
    get: (uris: string[], vis: Visibility, fields: FieldSet) => {
      gets.push(uris);
      return index.get(uris, vis, fields);
    },
  });
  const outliner = await createOutliner({ languages: ['typescript'] });
  srv = await startTestServer([createServer({ index: counting, outliner: outliner.outline, log: pino({ level: 'silent' }) })], { checkReady: () => tierReaderReady(index) });
  client = connect(tierReader.TierReaderServiceClient, srv.address);
});
afterAll(async () => {
  client.close();
  await srv.close();
  await index.close();
  db.close();
});
beforeEach(() => {
  gets.length = 0;
});

const PASS = [Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.PERMISSION_DENIED];
function rpc<Req, Res>(m: (r: Req, md: never, o: never, cb: never) => unknown, req: Req): Promise<Res> {
  return callUnary(m.bind(client) as never, req, Budget.ofMs(10_000), { domain: 'tier-reader', pass: PASS }) as Promise<Res>;
}
function identity(over: Partial<common.Identity> = {}): common.Identity {
  return { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '', ...over };
}
function cand(uri: string, category: string, over: Partial<tierReader.TierCandidate> = {}): tierReader.TierCandidate {
  return { uri, category, abstract: `abstract of ${uri}`, isDirectory: false, openContext: false, score: 0.5, rankedScore: 0.5, storedOverview: '', ...over };
}
const readTiers = (candidates: tierReader.TierCandidate[], over: Partial<tierReader.ReadTiersRequest> = {}) =>
  rpc<tierReader.ReadTiersRequest, tierReader.ReadTiersResponse>(client.readTiers, {
    identity: identity(),
    candidates,
    maxTokens: 1600,
    detail: undefined,
    tokenizer: '',
    codeOutline: true,
    packing: '',
    ...over,
  });
const readContent = (uri: string, tier: string, id: common.Identity = identity()) =>
  rpc<tierReader.ReadContentRequest, tierReader.ReadContentResponse>(client.readContent, { identity: id, uri, tier });

describe('TierReaderService', () => {
  it('TierReader health - index answers ping - SERVING', async () => {
    await expect(checkHealth(srv.address, '')).resolves.toBe(true);
  });

  describe('ReadTiers', () => {
    it('TierReader.ReadTiers - default tiers - reads only the event body and the directory sidecar, once each', async () => {
      const res = await readTiers([
        cand(EVENT, 'events'),
        cand(`${ALICE}/memories/entities/openviking.md`, 'entities'),
        cand('viking://resources/docs/api.md', 'resources'),
        cand('viking://agent/skills/deploy.md', 'skills'),
        cand('viking://resources/docs', 'resources', { isDirectory: true }),
        cand(EVENT, 'events', { score: 0.3 }),
      ]);
      expect(gets).toEqual([[EVENT, 'viking://resources/docs/.overview.md']]);
      expect(res.reads).toBe(2);
      expect(res.items.map((i) => i.read)).toEqual([true, false, false, false, true, true]);
      expect(res.items[0]).toEqual({
        read: true,
        overview: 'Shipped the stdio MCP proxy.',
        full: '# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter',
        note: '',
      });
      expect(res.items[4]).toEqual({ read: true, overview: '# Docs\nReference pages for the HTTP search API.', full: '', note: '' });
      expect(res.items[1]).toEqual({ read: false, overview: '', full: '', note: '' });
    });

    it('TierReader.ReadTiers - packing evidence - no body for a memory whose abstract is its body and whose overview is stored; bodies for what needs them; nothing below the floor', async () => {
      const res = await readTiers(
        [
          cand(EVENT, 'events', { abstract: 'Shipped the stdio MCP proxy. chatter', storedOverview: 'Shipped the stdio MCP proxy.', score: 0.8, rankedScore: 0.8 }),
          cand(`${ALICE}/memories/entities/openviking.md`, 'entities', { abstract: '', storedOverview: '', score: 0.7, rankedScore: 0.7 }),
          cand('viking://resources/docs', 'resources', { isDirectory: true, storedOverview: '', score: 0.6, rankedScore: 0.6 }),
          cand('viking://resources/docs/api.md', 'resources', { score: 0.05, rankedScore: 0.05 }),
        ],
        { packing: 'evidence', bestScore: 0.8 },
      );
      // The event needs neither read (its abstract is its whole body, its overview is stored);
      // the entity without an abstract and the directory without a stored overview are read.
      expect(gets.flat().sort()).toEqual(['viking://resources/docs/.overview.md', `${ALICE}/memories/entities/openviking.md`]);
      expect(res.items.map((i) => i.read)).toEqual([false, true, true, false]);
      await expect(readTiers([cand(EVENT, 'events')], { packing: 'greedy' })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'UNKNOWN_PACKING' });
    });

    it('TierReader.ReadTiers - detail pinned to full - every candidate read; a long document’s full body is the whole content', async () => {
      const res = await readTiers([cand(LONG, 'resources'), cand('viking://agent/skills/deploy.md', 'skills')], { detail: detailToWire('full') });
      expect(gets.flat().sort()).toEqual(['viking://agent/skills/deploy.md', LONG]);
      expect(res.items[0].full).toBe(longGuide());
      expect(res.items[0].overview.startsWith('# Gardening handbook')).toBe(true);
      expect(res.items[1].full).toBe('Skill: deploy the service to Kubernetes.');
    });

    it('TierReader.ReadTiers - per-category pin - only that category read', async () => {
      await readTiers([cand(`${ALICE}/memories/preferences/饮食.md`, 'preferences'), cand('viking://resources/docs/api.md', 'resources')], {
        detail: detailToWire({ preferences: 'overview' }),
      });
      expect(gets.flat()).toEqual([`${ALICE}/memories/preferences/饮食.md`]);
    });

    it('TierReader.ReadTiers - code file pinned at overview - the outliner skeleton, or the document overview without code_outline', async () => {
      const withOutline = await readTiers([cand(CODE, 'resources')], { detail: detailToWire('overview') });
      expect(withOutline.items[0].overview.split('\n')[0]).toBe('# server.ts [aider-repomap-lite, compact]');
      expect(withOutline.items[0].overview).toContain('main()');
      const plain = await readTiers([cand(CODE, 'resources')], { detail: detailToWire('overview'), codeOutline: false });
      expect(plain.items[0].overview).not.toContain('aider-repomap-lite');
    });

    it('TierReader.ReadTiers - directory with refused front matter - bad_front_matter note, no overview, no error', async () => {
      const res = await readTiers([cand('viking://resources/broken', 'resources', { isDirectory: true })]);
      expect(res.items[0]).toEqual({ read: true, overview: '', full: '', note: 'bad_front_matter' });
    });

    it('TierReader.ReadTiers - other peer in the normal context vs the open context - hidden vs read', async () => {
      const dave = `${ALICE}/peers/dave/memories/events/hike.md`;
      const asBob = identity({ actorPeerId: 'bob' });
      const res = await readTiers(
        [cand(`${ALICE}/peers/bob/memories/events/trip.md`, 'events'), cand(dave, 'events'), cand(dave, 'events', { openContext: true })],
        { identity: asBob },
      );
      expect(res.items.map((i) => [i.read, i.note])).toEqual([
        [true, ''],
        [false, 'not_found'],
        [true, ''],
      ]);
      expect(res.items[2].overview).toBe('Dave hiked the glacier trail.');
      expect(res.reads).toBe(3);
    });

    it('TierReader.ReadTiers - candidates of another user or account - not_found, never their bodies', async () => {
      const res = await readTiers([cand(`${CAROL}/memories/events/secret.md`, 'events'), cand(`${ALICE}/memories/events/globex.md`, 'events')]);
      expect(res.items).toEqual([
        { read: false, overview: '', full: '', note: 'not_found' },
        { read: false, overview: '', full: '', note: 'not_found' },
      ]);
      const root = await readTiers([cand(`${CAROL}/memories/events/secret.md`, 'events', { openContext: true })], { identity: identity({ role: common.Role.ROLE_ROOT }) });
      expect(root.items[0].note).toBe('not_found');
    });

    it('TierReader.ReadTiers - unknown tokenizer - INVALID_ARGUMENT UNKNOWN_TOKENIZER', async () => {
      await expect(readTiers([cand(EVENT, 'events')], { tokenizer: 'gpt-17' })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'UNKNOWN_TOKENIZER' });
    });

    it('TierReader.ReadTiers - exact tokenizer - same read decision on small abstracts', async () => {
      const res = await readTiers([cand(EVENT, 'events'), cand('viking://resources/docs/api.md', 'resources')], { tokenizer: 'o200k_base' });
      expect(res.items.map((i) => i.read)).toEqual([true, false]);
    });
  });

  describe('ReadContent', () => {
    it('TierReader.ReadContent - memory file - read is the content as written; abstract and overview the stored tiers', async () => {
      expect(await readContent(EVENT, 'read')).toMatchObject({ text: EVENT_BODY, isDirectory: false });
      expect((await readContent(EVENT, 'read')).contentHash).not.toBe('');
      expect((await readContent(EVENT, 'abstract')).text).toBe('# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter');
      expect((await readContent(EVENT, 'overview')).text).toBe('Shipped the stdio MCP proxy.');
    });

    it('TierReader.ReadContent - Chinese memory - Summary section as overview', async () => {
      expect((await readContent(`${ALICE}/memories/preferences/饮食.md`, 'overview')).text).toBe('喜欢吃四川火锅。');
    });

    it('TierReader.ReadContent - directory - its sidecars', async () => {
      expect(await readContent('viking://resources/docs', 'abstract')).toMatchObject({ text: 'Documentation of the HTTP API.', isDirectory: true });
      expect((await readContent('viking://resources/docs', 'overview')).text).toBe('# Docs\nReference pages for the HTTP search API.');
      expect((await readContent('viking://resources/docs/', 'read')).text).toBe('---\ndirectory: docs\n---\n# Docs\nReference pages for the HTTP search API.');
    });

    it('TierReader.ReadContent - the ~ alias - the caller’s own space', async () => {
      expect((await readContent('viking://~/memories/entities/openviking.md', 'read')).text).toBe('OpenViking: context database for AI agents.');
    });

    it('TierReader.ReadContent - unknown URI, other account - NOT_FOUND', async () => {
      await expect(readContent('viking://resources/nope.md', 'read')).rejects.toMatchObject({ code: Code.NOT_FOUND, reason: 'NOT_FOUND' });
      await expect(readContent(`${ALICE}/memories/events/globex.md`, 'read')).rejects.toMatchObject({ code: Code.NOT_FOUND });
    });

    it('TierReader.ReadContent - peer hidden by another actor peer - NOT_FOUND', async () => {
      await expect(readContent(`${ALICE}/peers/dave/memories/events/hike.md`, 'read', identity({ actorPeerId: 'bob' }))).rejects.toMatchObject({ code: Code.NOT_FOUND });
      expect((await readContent(`${ALICE}/peers/dave/memories/events/hike.md`, 'read')).text).toBe('# Summary\nDave hiked the glacier trail.');
    });

    it('TierReader.ReadContent - another user’s space - PERMISSION_DENIED for a user, readable by root', async () => {
      const err = await readContent(`${CAROL}/memories/events/secret.md`, 'read').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: Code.PERMISSION_DENIED, reason: 'ACCESS_DENIED' });
      expect((err as Error).message).toContain('Access denied');
      const root = await readContent(`${CAROL}/memories/events/secret.md`, 'abstract', identity({ role: common.Role.ROLE_ROOT }));
      expect(root.text).toBe('# Summary\nCarol drafted the secret rocket plan.');
    });

    it('TierReader.ReadContent - malformed URI or tier - INVALID_ARGUMENT', async () => {
      await expect(readContent('https://example.com/x', 'read')).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'INVALID_URI' });
      await expect(readContent(EVENT, 'full')).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_TIER' });
    });
  });
});
