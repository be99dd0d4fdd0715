/**
 * Context-contract §1.1 (api_key auth mode), §2.4 and §3.3 for non-root callers, through the
 * HTTP API of a mesh started with `CTXMESH_AUTH_MODE=api_key`: the key is the identity
 * (identity headers are ignored), the actor-peer header still scopes peers, tenants are
 * isolated, and a user-role caller's resources bucket searches its whole user root.
 */
import { startContractMesh, context, search, write, writeAll, type ContractMesh, type Who } from './harness';
import { violations } from './oracle';

jest.setTimeout(60_000);

let cm: ContractMesh;

const ALICE: Who = { account: 'acme', user: 'alice', apiKey: 'k-alice' };
const BOB: Who = { account: 'acme', user: 'bob', apiKey: 'k-bob' };
const OLGA: Who = { account: 'other', user: 'olga', apiKey: 'k-olga' };

beforeAll(async () => {
  cm = await startContractMesh({ CTXMESH_AUTH_MODE: 'api_key', CTXMESH_API_KEYS: 'k-alice=acme:alice,k-bob=acme:bob,k-olga=other:olga' });
  await Promise.all([
    writeAll(cm, ALICE, [
      ['viking://user/alice/memories/events/fig.md', '# Summary\nAlice picked figs.\n\n# Log\nfig fig'],
      ['viking://user/alice/notes/plan.md', 'Fig planting plan, a note outside resources/.'],
      ['viking://user/alice/peers/carol/memories/events/carol.md', '# Summary\nCarol dried figs.\n\n# Log\nfig'],
      ['viking://user/alice/peers/carol/resources/figs.md', "Carol's fig resource."],
      ['viking://resources/acme/figs.md', 'Account-wide fig guide.'],
    ]),
    write(cm, BOB, 'viking://user/bob/memories/events/bobfig.md', '# Summary\nBob ate figs.\n\n# Log\nfig'),
    writeAll(cm, OLGA, [
      ['viking://user/olga/memories/events/olgafig.md', '# Summary\nOlga sold figs.\n\n# Log\nfig'],
      ['viking://resources/other/figs.md', 'Another tenant fig guide.'],
    ]),
  ]);
}, 90_000);

afterAll(async () => {
  await cm?.stop();
});

const uris = (r: { entries: Array<{ uri: string }> }) => r.entries.map((e) => e.uri).sort();

interface Row {
  title: string;
  run: () => Promise<void>;
}

const rows: Row[] = [
  {
    title: '§1.1 api_key mode: a request without a key is 401 UNAUTHENTICATED',
    run: async () => {
      const res = await search(cm, null, { query: 'fig', mode: 'context' }, { 'X-OpenViking-Account': 'acme', 'X-OpenViking-User': 'alice' });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status: 'error', result: null, error: { code: 'UNAUTHENTICATED' } });
    },
  },
  {
    title: '§1.1 api_key mode: an unknown key is 401 UNAUTHENTICATED',
    run: async () => {
      const res = await search(cm, null, { query: 'fig', mode: 'context' }, { 'X-API-Key': 'k-nobody' });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHENTICATED');
    },
  },
  {
    title: '§1.1 api_key mode: identity headers are ignored, the key decides account and user',
    run: async () => {
      const res = await search(cm, null, { query: 'fig', mode: 'context', limit: 20 }, { 'X-API-Key': 'k-alice', 'X-OpenViking-Account': 'other', 'X-OpenViking-User': 'olga' });
      expect(res.status).toBe(200);
      expect(res.body.result.entries.map((e: { uri: string }) => e.uri).sort()).toEqual([
        'viking://resources/acme/figs.md',
        'viking://user/alice/memories/events/fig.md',
        'viking://user/alice/notes/plan.md',
        'viking://user/alice/peers/carol/memories/events/carol.md',
      ]);
    },
  },
  {
    title: '§1.1 Authorization: Bearer authenticates; X-API-Key wins when both are sent',
    run: async () => {
      const bearer = await search(cm, null, { query: 'fig', mode: 'context', limit: 20 }, { Authorization: 'Bearer k-bob' });
      expect(bearer.status).toBe(200);
      expect(bearer.body.result.entries.map((e: { uri: string }) => e.uri).sort()).toEqual(['viking://resources/acme/figs.md', 'viking://user/bob/memories/events/bobfig.md']);
      const both = await search(cm, null, { query: 'fig', mode: 'context', limit: 20 }, { Authorization: 'Bearer k-bob', 'X-API-Key': 'k-alice' });
      expect(both.body.result.entries.some((e: { uri: string }) => e.uri.startsWith('viking://user/alice/'))).toBe(true);
      expect(both.body.result.entries.some((e: { uri: string }) => e.uri.startsWith('viking://user/bob/'))).toBe(false);
    },
  },
  {
    title: '§1.1/§2.4 the actor-peer header scopes the peers view without changing the identity',
    run: async () => {
      const r = await context(cm, { ...ALICE, actorPeer: 'carol' }, { query: 'fig', limit: 20 });
      expect(violations(r, 'estimate')).toEqual([]);
      expect(Object.fromEntries(r.entries.map((e) => [e.uri, e.origin]))).toEqual({
        'viking://resources/acme/figs.md': 'self',
        'viking://user/alice/memories/events/fig.md': 'self',
        'viking://user/alice/notes/plan.md': 'self',
        'viking://user/alice/peers/carol/memories/events/carol.md': 'actor_peer',
        'viking://user/alice/peers/carol/resources/figs.md': 'actor_peer',
      });
    },
  },
  {
    title: '§2.1 tenants are isolated: other users of the account and other accounts are invisible; account-wide resources are shared within the account',
    run: async () => {
      expect(uris(await context(cm, BOB, { query: 'fig', limit: 20 }))).toEqual(['viking://resources/acme/figs.md', 'viking://user/bob/memories/events/bobfig.md']);
      expect(uris(await context(cm, OLGA, { query: 'fig', limit: 20 }))).toEqual(['viking://resources/other/figs.md', 'viking://user/olga/memories/events/olgafig.md']);
    },
  },
  {
    title: '§3.3 a user-role caller without an actor peer: the resources bucket searches viking://resources and the whole user root',
    run: async () => {
      const r = await context(cm, ALICE, { query: 'fig', quotas: { resources: 10 } });
      expect(uris(r)).toEqual(['viking://resources/acme/figs.md', 'viking://user/alice/notes/plan.md']);
      expect(r.entries.every((e) => e.category === 'resources')).toBe(true);
    },
  },
  {
    title: '§3.3 a user-role caller with an actor peer: the resources bucket searches viking://resources, {user}/resources and the actor peer\'s resources',
    run: async () => {
      const r = await context(cm, { ...ALICE, actorPeer: 'carol' }, { query: 'fig', quotas: { resources: 10 } });
      expect(uris(r)).toEqual(['viking://resources/acme/figs.md', 'viking://user/alice/peers/carol/resources/figs.md']);
    },
  },
];

describe('context mode through HTTP: api_key identity and non-root targets (§1.1, §2.4, §3.3)', () => {
  it.each(rows)('$title', async ({ run }) => {
    await run();
  });
});
