/**
 * GatherPassages and ExpandLinks over real gRPC on port 0, on the real embedded store seeded
 * the way the indexer writes (crafted corpora for MMR, per-document caps, validity intervals,
 * subjects, workspaces and links).
 */
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { common, gather } from '@ctxmesh/proto';
import { Budget, callUnary, Code, connect } from '@ctxmesh/rpc';
import { EmbeddedVectorIndex, openEmbeddedDb, type EmbeddedDb } from '@ctxmesh/stores';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { createServer } from '../src';
import { writeFile, type FileOptions } from './corpus';

const NOW = Date.parse('2026-07-15T00:00:00.000Z');
const T = (iso: string) => Date.parse(iso);

let db: EmbeddedDb;
let index: EmbeddedVectorIndex;
let srv: TestServer;
let client: gather.GatherServiceClient;

/** Five sections, each about the zebra migration in other words: one long document, many passages. */
function zebraBook(): string {
  const parts = ['# Zebra field notes'];
  for (let s = 1; s <= 5; s++) {
    parts.push(`## Season ${s}`);
    for (let i = 0; i < 9; i++) parts.push(`Season ${s} notes, entry ${i}: the zebra migration crossed the river at dawn while herds of wildebeest followed the rains across the plains and the grass grew back quickly.`);
  }
  return parts.join('\n\n');
}

beforeAll(async () => {
  db = openEmbeddedDb(':memory:');
  index = new EmbeddedVectorIndex(db, { dimension: 256 });
  const e = new LexicalEmbedder({ dimension: 256 });
  const put = (uri: string, content: string, o: FileOptions = {}) => writeFile(index, e, 'acme', uri, content, o);
  // Near-duplicates (MMR): three copies of one idea and one different take on the same question.
  await put('viking://resources/mmr/dup1.md', 'Blue green deployment rollback switches live traffic back to the previous color in seconds.');
  await put('viking://resources/mmr/dup2.md', 'Blue green deployment rollback switches live traffic back to the previous colour in seconds.');
  await put('viking://resources/mmr/dup3.md', 'Blue green deployment rollback switches the live traffic back to the previous color within seconds.');
  await put('viking://resources/mmr/other.md', 'A rollback of database migrations restores the snapshot; deployment traffic waits until the schema is back.');
  // Per-document cap: one long chunked document, every passage on topic, and a short one.
  await put('viking://resources/zebra/book.md', zebraBook());
  await put('viking://resources/zebra/short.md', 'A short note: the zebra migration reached the river crossing in July.');
  // Validity intervals of one fact.
  await put('viking://resources/office/wifi-2025.md', 'The office wifi password is sunflower (valid through 2025).', { validTo: T('2026-01-01T00:00:00Z') });
  await put('viking://resources/office/wifi-h1.md', 'The office wifi password is marigold for the first half of 2026.', { validFrom: T('2026-01-01T00:00:00Z'), validTo: T('2026-07-01T00:00:00Z') });
  await put('viking://resources/office/wifi-h2.md', 'The office wifi password is lavender from July 2026 on.', { validFrom: T('2026-07-01T00:00:00Z') });
  await put('viking://resources/office/wifi-future.md', 'The office wifi password will be tulip in 2027.', { validFrom: T('2027-01-01T00:00:00Z') });
  // Memories: alice's own, carol's, group memories in two workspaces.
  await put('viking://user/alice/memories/preferences/editor.md', 'Alice prefers the vim editor with a dark theme.');
  await put('viking://user/carol/memories/preferences/editor.md', 'Carol prefers the emacs editor with org mode.');
  await put('viking://agent/memories/conventions/editor.md', 'Team convention: editor config lives in the repository root.');
  await put('viking://agent/memories/conventions/editor-proj.md', 'Project convention: the editor of record is helix.', { workspace: 'proj' });
  await put('viking://resources/proj/editor-guide.md', 'Editor setup guide for the project workspace only.', { workspace: 'proj' });
  // Links (graph assist): the seed mentions the linked page, which shares no words with the query's topic.
  await put('viking://resources/links/seed.md', 'Incident review of the payment outage. Details: viking://resources/links/linked.md and viking://resources/links/missing.md', {
    links: ['viking://resources/links/linked.md', 'viking://resources/links/missing.md'],
  });
  await put('viking://resources/links/linked.md', 'Payment outage timeline: the card processor timed out at 14:02 and recovered at 14:40.');
  await put('viking://resources/links/unlinked.md', 'Payment outage postmortem template for future incidents.');
  await put('viking://resources/links/seed-old.md', 'Index of retired runbooks: viking://resources/links/old-pager.md', { links: ['viking://resources/links/old-pager.md'] });
  await put('viking://resources/links/old-pager.md', 'Pager rotation: escalate to the duty manager after ten minutes.', { validTo: T('2026-01-01T00:00:00Z') });
  srv = await startTestServer([createServer({ index, embedder: e, log: pino({ level: 'silent' }), now: () => NOW })]);
  client = connect(gather.GatherServiceClient, srv.address);
});

afterAll(async () => {
  client.close();
  await srv.close();
  await index.close();
  db.close();
});

function identity(over: Partial<common.Identity> = {}): common.Identity {
  return { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: 'default', requestId: '', ...over };
}

function req(over: Partial<gather.GatherPassagesRequest> = {}): gather.GatherPassagesRequest {
  return { identity: identity(), queries: [], subject: '', topK: 8, memoryK: 0, maxPerDocument: 2, asOfMs: undefined, candidatePool: 0, ...over };
}

const passages = (over: Partial<gather.GatherPassagesRequest>) =>
  callUnary(client.gatherPassages.bind(client), req(over), Budget.ofMs(10_000), { domain: 'gather', pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED] });
const links = (over: Partial<gather.ExpandLinksRequest>) =>
  callUnary(client.expandLinks.bind(client), { identity: identity(), seedUris: [], queries: [], limit: 5, asOfMs: undefined, ...over }, Budget.ofMs(10_000), {
    domain: 'gather',
    pass: [Code.INVALID_ARGUMENT],
  });
const uris = (r: { passages: gather.PassageRef[] }) => r.passages.map((p) => p.uri);

describe('GatherPassages', () => {
  it('Gather.GatherPassages - near-duplicates without mmr_lambda - OK in relevance order', async () => {
    const r = await passages({ queries: ['blue green deployment rollback traffic previous color'], topK: 3 });
    expect(uris(r).slice(0, 3).sort()).toEqual(['viking://resources/mmr/dup1.md', 'viking://resources/mmr/dup2.md', 'viking://resources/mmr/dup3.md']);
    const scores = r.passages.map((p) => p.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('Gather.GatherPassages - near-duplicates with a diversity-leaning mmr_lambda - OK, the different passage moves up', async () => {
    const plain = await passages({ queries: ['blue green deployment rollback traffic previous color'], topK: 2 });
    const mmr = await passages({ queries: ['blue green deployment rollback traffic previous color'], topK: 2, mmrLambda: 0.5 });
    expect(uris(plain)).not.toContain('viking://resources/mmr/other.md');
    expect(uris(mmr)[0]).toBe(uris(plain)[0]);
    expect(uris(mmr)[1]).toBe('viking://resources/mmr/other.md');
  });

  it('Gather.GatherPassages - mmr_lambda 1 - OK, identical to no MMR pass', async () => {
    const q = ['zebra migration river crossing'];
    expect(uris(await passages({ queries: q, mmrLambda: 1, topK: 5 }))).toEqual(uris(await passages({ queries: q, topK: 5 })));
  });

  it('Gather.GatherPassages - a long document where every passage matches - OK, at most max_per_document of its passages', async () => {
    const q = ['zebra migration river dawn wildebeest rains'];
    const two = await passages({ queries: q, topK: 6 });
    const fromBook = (r: gather.GatherPassagesResponse) => r.passages.filter((p) => p.docUri === 'viking://resources/zebra/book.md');
    expect(fromBook(two)).toHaveLength(2);
    expect(fromBook(two).every((p) => /#p\d+$/.test(p.uri))).toBe(true);
    expect(two.passages.map((p) => p.uri)).not.toContain('viking://resources/zebra/book.md');
    const one = await passages({ queries: q, topK: 6, maxPerDocument: 1 });
    expect(fromBook(one)).toHaveLength(1);
    expect(one.passages.some((p) => p.uri === 'viking://resources/zebra/short.md')).toBe(true);
    const four = await passages({ queries: q, topK: 6, maxPerDocument: 4 });
    expect(fromBook(four)).toHaveLength(4);
    expect(fromBook(four).every((p) => p.title === 'book.md' && p.text.includes('zebra migration'))).toBe(true);
  });

  it('Gather.GatherPassages - max_per_document 0 on the wire - OK, the contract default of 2 applies', async () => {
    const r = await passages({ queries: ['zebra migration river dawn wildebeest rains'], topK: 6, maxPerDocument: 0 });
    expect(r.passages.filter((p) => p.docUri === 'viking://resources/zebra/book.md')).toHaveLength(2);
  });

  it.each([
    ['2025-06-01T00:00:00Z', 'wifi-2025.md'],
    ['2026-01-01T00:00:00Z', 'wifi-h1.md'],
    ['2026-03-01T00:00:00Z', 'wifi-h1.md'],
    ['2026-07-01T00:00:00Z', 'wifi-h2.md'],
    ['2027-02-01T00:00:00Z', 'wifi-future.md'],
  ])('Gather.GatherPassages - as_of %s - OK, only the fact valid then (%s)', async (asOf, file) => {
    const r = await passages({ queries: ['office wifi password'], asOfMs: Date.parse(asOf) });
    const wifi = uris(r).filter((u) => u.includes('/office/wifi'));
    // The open-ended 2026-H2 fact is still valid in 2027 alongside the 2027 one.
    const expected = file === 'wifi-future.md' ? ['wifi-future.md', 'wifi-h2.md'] : [file];
    expect(wifi.map((u) => u.slice(u.lastIndexOf('/') + 1)).sort()).toEqual(expected);
  });

  it('Gather.GatherPassages - as_of absent - OK, now: an expired fact is never returned as current', async () => {
    const r = await passages({ queries: ['office wifi password'] });
    const wifi = uris(r).filter((u) => u.includes('/office/wifi'));
    expect(wifi).toEqual(['viking://resources/office/wifi-h2.md']);
  });

  it("Gather.GatherPassages - memories - OK, the caller's own by default, group memories of the workspace only", async () => {
    const r = await passages({ queries: ['editor preferences convention'], topK: 0, memoryK: 5 });
    expect(r.passages).toEqual([]);
    expect(r.memories.map((m) => [m.uri, m.subject])).toEqual([['viking://user/alice/memories/preferences/editor.md', 'alice']]);
    expect(r.memories[0].text).toBe('Alice prefers the vim editor with a dark theme.');
    expect(r.groupMemories.map((m) => [m.uri, m.subject])).toEqual([['viking://agent/memories/conventions/editor.md', '']]);
    const proj = await passages({ identity: identity({ workspace: 'proj' }), queries: ['editor preferences convention guide'], memoryK: 5 });
    expect(proj.groupMemories.map((m) => m.uri)).toEqual(['viking://agent/memories/conventions/editor-proj.md']);
    expect(uris(proj)).toEqual(['viking://resources/proj/editor-guide.md']);
    // The subject's memories follow the person, not the workspace.
    expect(proj.memories.map((m) => m.uri)).toEqual(['viking://user/alice/memories/preferences/editor.md']);
  });

  it('Gather.GatherPassages - subject names another user - OK for root, scoping memories only', async () => {
    const root = identity({ role: common.Role.ROLE_ROOT });
    const mine = await passages({ identity: root, queries: ['editor preferences'], memoryK: 5 });
    const r = await passages({ identity: root, queries: ['editor preferences'], memoryK: 5, subject: 'carol' });
    expect(r.memories.map((m) => [m.uri, m.subject])).toEqual([['viking://user/carol/memories/preferences/editor.md', 'carol']]);
    expect(uris(r)).toEqual(uris(mine));
    expect(r.groupMemories).toEqual(mine.groupMemories);
  });

  it('Gather.GatherPassages - an ordinary user names another subject - PERMISSION_DENIED', async () => {
    await expect(passages({ queries: ['editor'], memoryK: 5, subject: 'carol' })).rejects.toMatchObject({ code: Code.PERMISSION_DENIED });
  });

  it('Gather.GatherPassages - blank queries - INVALID_ARGUMENT', async () => {
    await expect(passages({ queries: [' '] })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'EMPTY_QUERY' });
  });

  it('Gather.GatherPassages - another account - OK, nothing of acme', async () => {
    const r = await passages({ identity: identity({ accountId: 'globex' }), queries: ['zebra migration'], memoryK: 5 });
    expect(r).toEqual({ passages: [], memories: [], groupMemories: [] });
  });
});

describe('ExpandLinks', () => {
  it('Gather.ExpandLinks - a seed linking a relevant page - OK, the linked passage with its text and score', async () => {
    const r = await links({ seedUris: ['viking://resources/links/seed.md'], queries: ['card processor timeline'] });
    expect(uris(r)).toEqual(['viking://resources/links/linked.md']);
    expect(r.passages[0].text).toContain('card processor timed out');
    expect(r.passages[0].score).toBeGreaterThan(0);
  });

  it('Gather.ExpandLinks - a seed without links, or an unknown seed - OK, nothing', async () => {
    expect(await links({ seedUris: ['viking://resources/links/unlinked.md'], queries: ['payment outage'] })).toEqual({ passages: [] });
    expect(await links({ seedUris: ['viking://resources/links/nope.md'], queries: ['payment outage'] })).toEqual({ passages: [] });
  });

  it('Gather.ExpandLinks - a passage URI as the seed - OK, expanded from its document', async () => {
    const r = await links({ seedUris: ['viking://resources/links/seed.md#p1'], queries: ['payment outage timeline'] });
    expect(uris(r)).toEqual(['viking://resources/links/linked.md']);
  });

  it('Gather.ExpandLinks - a linked page that has expired - OK, nothing now, the page as_of a time it was valid', async () => {
    const q = ['pager escalation duty manager'];
    expect((await links({ seedUris: ['viking://resources/links/seed-old.md'], queries: q })).passages).toEqual([]);
    const then = await links({ seedUris: ['viking://resources/links/seed-old.md'], queries: q, asOfMs: Date.parse('2025-12-01T00:00:00Z') });
    expect(uris(then)).toEqual(['viking://resources/links/old-pager.md']);
  });

  it('Gather.ExpandLinks - limit 0 or no seeds - OK, nothing', async () => {
    expect(await links({ seedUris: ['viking://resources/links/seed.md'], queries: ['payment'], limit: 0 })).toEqual({ passages: [] });
    expect(await links({ seedUris: [], queries: ['payment'] })).toEqual({ passages: [] });
  });

  it('Gather.ExpandLinks - blank queries - INVALID_ARGUMENT', async () => {
    await expect(links({ seedUris: ['viking://resources/links/seed.md'], queries: [''] })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
  });
});
