import { createOutliner } from '@ctxmesh/outline';
import { estimateTokens } from '@ctxmesh/kernel';
import { versionHash, type VersionInput } from './hash';
import { buildRecords, extractLinks, passageUri, titleOf, type DocumentInput } from './records';

const T0 = Date.parse('2026-01-02T03:04:05.000Z');

function input(uri: string, content: string, over: Partial<DocumentInput> = {}): DocumentInput {
  return {
    uri,
    content,
    account: 'acme',
    workspace: 'default',
    subject: '',
    tags: ['team=search'],
    validFrom: null,
    validTo: null,
    createdAt: T0,
    updatedAt: T0 + 1000,
    contentHash: 'h1',
    ...over,
  };
}

/** A markdown document of about `sections × 8 × 25` words, well above one passage. */
function longDoc(sections: number): string {
  const parts = ['# Operations handbook', 'How we run the cluster.'];
  for (let s = 0; s < sections; s++) {
    parts.push(`## Chapter ${s}`);
    for (let p = 0; p < 8; p++) parts.push(Array.from({ length: 25 }, (_, w) => `c${s}p${p}w${w}`).join(' '));
  }
  return parts.join('\n\n');
}

describe('buildRecords', () => {
  it('makes a memory abstract the whole body without the MEMORY_FIELDS comment', () => {
    const body = '# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter\n<!-- MEMORY_FIELDS {"k": 1} -->\n';
    const [doc] = buildRecords(input('viking://user/alice/memories/events/launch.md', body));
    expect(doc!.abstract).toBe('# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter');
    expect(doc!.overview).toBe('Shipped the stdio MCP proxy.');
    expect(doc!.body).toBe(body);
    expect(doc).toMatchObject({ contextType: 'memory', category: 'events', owner: 'alice', peer: '', level: 2, passageIndex: 0 });
    expect(doc!.embedText).not.toContain('MEMORY_FIELDS');
  });

  it('cuts a resource abstract to at most 256 characters from its first paragraph', () => {
    const para = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const [doc] = buildRecords(input('viking://resources/docs/api.md', `# API\n\n${para}\n\nsecond paragraph`));
    expect(Array.from(doc!.abstract).length).toBeLessThanOrEqual(256);
    expect(doc!.abstract.startsWith('word0 word1')).toBe(true);
    expect(doc!.abstract.endsWith('…')).toBe(true);
    expect(doc).toMatchObject({ contextType: 'resource', category: 'resources', owner: '', title: 'API', tags: ['team=search'] });
  });

  it('builds the overview by source type: document heading tree, memory summary, code outline', async () => {
    const [doc] = buildRecords(input('viking://resources/readme.md', '# Title\nIntro line one\nline two\n\n## Install\n\nRun it.\n### Deep\n#### Deeper\n'));
    expect(doc!.overview).toBe('# Title\n  ## Install\n    ### Deep\n\nIntro line one\nline two');

    const src = 'export class Server {\n  start(port: number): void {}\n}\nexport function helper(a: string): number { return 1; }\n';
    const outliner = await createOutliner({ languages: ['typescript'] });
    const [code] = buildRecords(input('viking://resources/src/server.ts', src), { outliner: outliner.outline });
    expect(code!.overview.split('\n')[0]).toBe('# server.ts [aider-repomap-lite, compact]');
    expect(code!.overview).toContain('helper(a: string): number');
    // Code files keep their file name as title (a `#` comment is not a heading).
    expect(code!.title).toBe('server.ts');

    const [noOutliner] = buildRecords(input('viking://resources/src/server.ts', src));
    expect(noOutliner!.overview).not.toContain('aider-repomap-lite');
  });

  it('keeps a short document as its own single passage whose vector covers the body', () => {
    const recs = buildRecords(input('viking://resources/notes.md', '# Notes\n\nThe lighthouse keeper logs storms.'));
    expect(recs).toHaveLength(1);
    expect(recs[0]!.embedText).toBe('# Notes\n\nThe lighthouse keeper logs storms.');
  });

  it('chunks a long document into passages U#p1…U#pn pointing back to it', () => {
    const uri = 'viking://resources/ops/handbook.md';
    const content = longDoc(6);
    expect(estimateTokens(content)).toBeGreaterThan(512);
    const [doc, ...passages] = buildRecords(input(uri, content, { validFrom: T0, validTo: T0 + 5000, subject: 'bob' }));
    expect(doc).toMatchObject({ uri, docUri: uri, passageIndex: 0, level: 2, body: content, title: 'Operations handbook' });
    expect(passages.length).toBeGreaterThan(1);
    passages.forEach((p, i) => {
      expect(p).toMatchObject({ uri: passageUri(uri, i + 1), docUri: uri, passageIndex: i + 1, level: 2, abstract: '', parentUri: 'viking://resources/ops' });
      expect(p).toMatchObject({ validFrom: T0, validTo: T0 + 5000, subject: 'bob', contentHash: 'h1', createdAt: T0, updatedAt: T0 + 1000, tags: ['team=search'] });
      expect(estimateTokens(p.body)).toBeLessThanOrEqual(512);
      expect(p.embedText).toBe(p.body);
    });
    expect(passages[0]!.uri).toBe('viking://resources/ops/handbook.md#p1');
    // The document point is found by what summarises it; the passages carry the body.
    expect(doc!.embedText).toBe(`${doc!.abstract}\n\n${doc!.overview}`);
    expect(passages.map((p) => p.body).join('\n\n').split(/\s+/)).toEqual(content.split(/\s+/));
  });

  it('indexes directory sidecars as level 0 and level 1 points typed by the directory', () => {
    const [abs] = buildRecords(input('viking://user/alice/memories/entities/.abstract.md', '  People and teams.  '));
    expect(abs).toMatchObject({ level: 0, abstract: 'People and teams.', overview: '', title: 'entities', contextType: 'memory', category: 'entities' });
    expect(abs).toMatchObject({ uri: 'viking://user/alice/memories/entities/.abstract.md', docUri: 'viking://user/alice/memories/entities/.abstract.md' });

    const sidecar = '---\ndirectory: docs\n---\n# Docs\nAll the docs.\n';
    const [ov] = buildRecords(input('viking://resources/docs/.overview.md', sidecar));
    expect(ov).toMatchObject({ level: 1, abstract: '', overview: '# Docs\nAll the docs.', body: sidecar, title: 'docs', contextType: 'resource' });

    const [refused] = buildRecords(input('viking://resources/docs/.overview.md', '---\nno: directory key\n---\nbody'));
    expect(refused).toMatchObject({ level: 1, overview: '' });
  });

  it('records the viking:// links of the body, without itself, fragments or trailing punctuation', () => {
    const body = 'See viking://resources/a.md. Also [b](viking://resources/b.md#p2) and viking://resources/a.md, and me viking://resources/self.md';
    const [doc] = buildRecords(input('viking://resources/self.md', body));
    expect(doc!.links).toEqual(['viking://resources/a.md', 'viking://resources/b.md']);
    expect(extractLinks('"viking://user/alice/memories/x.md"', 'viking://resources/z')).toEqual(['viking://user/alice/memories/x.md']);
  });

  it('takes ownership and peer from the URI', () => {
    const [doc] = buildRecords(input('viking://user/alice/peers/bob/memories/preferences/tea.md', 'Likes green tea.'));
    expect(doc).toMatchObject({ owner: 'alice', peer: 'bob', category: 'preferences', contextType: 'memory', parentUri: 'viking://user/alice/peers/bob/memories/preferences' });
  });
});

describe('titleOf', () => {
  it('uses the first heading of prose, skipping a Summary heading, else the file name', () => {
    expect(titleOf('viking://resources/a.md', '# Summary\nx\n## Real title\n')).toBe('Real title');
    expect(titleOf('viking://resources/a.md', 'no heading')).toBe('a.md');
    expect(titleOf('viking://resources/run.py', '# shebang-ish comment\nprint(1)')).toBe('run.py');
  });
});

describe('versionHash', () => {
  const base: VersionInput = {
    content: 'body',
    account: 'acme',
    workspace: 'default',
    subject: '',
    tags: ['a=b'],
    validFrom: null,
    validTo: null,
    embedderId: 'lexical-v1-d256',
    layout: 'v1:p512:o0',
  };

  it('is the same for the same version and differs when anything indexed changes', () => {
    expect(versionHash(base)).toBe(versionHash({ ...base, tags: ['a=b'] }));
    const variants: Array<Partial<VersionInput>> = [
      { content: 'body!' },
      { tags: ['a=c'] },
      { validFrom: 0 },
      { validTo: 1 },
      { subject: 'bob' },
      { workspace: 'w2' },
      { account: 'other' },
      { embedderId: 'http:m:256' },
      { layout: 'v1:p256:o0' },
      { appendWriteId: 'w1' },
    ];
    const hashes = new Set(variants.map((v) => versionHash({ ...base, ...v })));
    expect(hashes.size).toBe(variants.length);
    expect(hashes.has(versionHash(base))).toBe(false);
  });

  it('does not let fields run into each other', () => {
    expect(versionHash({ ...base, account: 'ab', workspace: 'c' })).not.toBe(versionHash({ ...base, account: 'a', workspace: 'bc' }));
  });
});
