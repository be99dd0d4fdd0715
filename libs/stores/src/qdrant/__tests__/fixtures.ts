import type { NodeRecord, Visibility } from '../../ports/vector-index';

/**
 * A deterministic {@link NodeRecord} for tests (dimension 4 unless the vector is given):
 * a resource passage of `viking://resources/guide/intro.md` in account `acme`.
 */
export function sampleRecord(over: Partial<NodeRecord> = {}): NodeRecord {
  return {
    uri: 'viking://resources/guide/intro.md',
    docUri: 'viking://resources/guide/intro.md',
    parentUri: 'viking://resources/guide',
    contextType: 'resource',
    category: 'resources',
    level: 2,
    account: 'acme',
    owner: '',
    peer: '',
    workspace: 'default',
    subject: '',
    tags: ['Env=Prod', ' team=search '],
    createdAt: 1_767_225_600_000,
    updatedAt: 1_767_312_000_000,
    validFrom: null,
    validTo: null,
    title: 'Intro',
    abstract: 'How to install the search service.',
    overview: '# Intro\n  ## Install',
    body: 'Install the search service with npm, then run it.',
    contentHash: 'sha256:aaaa',
    passageIndex: 0,
    links: ['viking://resources/guide/setup.md'],
    vector: Float32Array.from([0.5, 0.5, 0.5, 0.5]),
    lexicalText: '',
    ...over,
  };
}

/** The visibility of user `alice` of account `acme`, no actor peer, every workspace. */
export function aliceVisibility(over: Partial<Visibility> = {}): Visibility {
  return { account: 'acme', user: 'alice', actorPeer: null, openPeers: false, allUsers: false, workspace: null, ...over };
}
