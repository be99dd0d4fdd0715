/**
 * Test corpus written the way the indexer writes it (the indexing data model): one document
 * point per file, passage points `U#p<i>` for long documents, directory sidecars at levels 0/1,
 * ownership and context type derived from the URI. Mixed English and Chinese.
 */
import { LexicalEmbedder } from '@ctxmesh/embedder';
import {
  categoryOfUri,
  computeAbstract,
  contextTypeOf,
  estimateTokens,
  extractOverview,
  isMemoryUri,
  ownershipOf,
  prepareBody,
  stripDirectoryFrontMatter,
  stripMemoryFields,
} from '@ctxmesh/kernel';
import type { NodeRecord, VectorIndex } from '@ctxmesh/stores';

/** Per-file options. */
export interface FileOptions {
  account?: string;
  tags?: string[];
  workspace?: string;
  validFrom?: number | null;
  validTo?: number | null;
  updatedAt?: number;
  links?: string[];
}

/** Passage budget of the data model, in estimated tokens. */
export const PASSAGE_TOKENS = 512;

/** Split at headings, then paragraphs, never above {@link PASSAGE_TOKENS}. */
export function splitPassages(text: string): string[] {
  const sections: string[] = [];
  let cur: string[] = [];
  for (const line of text.split('\n')) {
    if (/^#{1,6}\s/.test(line) && cur.join('\n').trim() !== '') {
      sections.push(cur.join('\n'));
      cur = [];
    }
    cur.push(line);
  }
  if (cur.join('\n').trim() !== '') sections.push(cur.join('\n'));
  const out: string[] = [];
  for (const s of sections) {
    if (estimateTokens(s) <= PASSAGE_TOKENS) {
      out.push(s.trim());
      continue;
    }
    let acc = '';
    for (const para of s.split(/\n\s*\n/)) {
      const next = acc ? `${acc}\n\n${para}` : para;
      if (acc && estimateTokens(next) > PASSAGE_TOKENS) {
        out.push(acc.trim());
        acc = para;
      } else acc = next;
    }
    if (acc.trim() !== '') out.push(acc.trim());
  }
  return out;
}

/** The records of one written file. */
export function fileRecords(embedder: LexicalEmbedder, account: string, uri: string, content: string, o: FileOptions = {}): NodeRecord[] {
  const { user, peer } = ownershipOf(uri);
  const base = {
    docUri: uri,
    parentUri: uri.slice(0, uri.lastIndexOf('/')),
    contextType: contextTypeOf(uri),
    category: categoryOfUri(uri),
    account,
    owner: user,
    peer,
    workspace: o.workspace ?? 'default',
    subject: '',
    tags: o.tags ?? [],
    createdAt: Date.parse('2026-07-01T00:00:00.000Z'),
    updatedAt: o.updatedAt ?? Date.parse('2026-07-10T00:00:00.000Z'),
    validFrom: o.validFrom ?? null,
    validTo: o.validTo ?? null,
    title: uri.slice(uri.lastIndexOf('/') + 1),
    contentHash: `h${content.length}-${Buffer.from(content).toString('base64').slice(-12)}`,
    links: o.links ?? [],
  };
  if (uri.endsWith('/.abstract.md')) {
    const abstract = content.trim();
    return [{ ...base, uri, level: 0, abstract, overview: '', body: content, passageIndex: 0, vector: embedder.embedOne(abstract), lexicalText: abstract }];
  }
  if (uri.endsWith('/.overview.md')) {
    let overview = '';
    try {
      overview = stripDirectoryFrontMatter(content);
    } catch {
      overview = '';
    }
    return [{ ...base, uri, level: 1, abstract: '', overview, body: content, passageIndex: 0, vector: embedder.embedOne(overview), lexicalText: overview || content }];
  }
  const body = prepareBody(uri, false, content);
  const abstract = isMemoryUri(uri) ? stripMemoryFields(content) : computeAbstract(uri, content);
  const overview = extractOverview({ uri, isDirectory: false, raw: content }, body);
  if (estimateTokens(content) <= PASSAGE_TOKENS) {
    const lexical = `${abstract}\n${body}`;
    return [{ ...base, uri, level: 2, abstract, overview, body: content, passageIndex: 0, vector: embedder.embedOne(lexical), lexicalText: lexical }];
  }
  const head = `${abstract}\n${overview}`;
  const doc: NodeRecord = { ...base, uri, level: 2, abstract, overview, body: content, passageIndex: 0, vector: embedder.embedOne(head), lexicalText: head };
  const passages = splitPassages(content).map(
    (text, i): NodeRecord => ({ ...base, uri: `${uri}#p${i + 1}`, level: 2, abstract: '', overview: '', body: text, passageIndex: i + 1, vector: embedder.embedOne(text), lexicalText: text }),
  );
  return [doc, ...passages];
}

/** Write one file into the index. */
export async function writeFile(index: VectorIndex, embedder: LexicalEmbedder, account: string, uri: string, content: string, o: FileOptions = {}): Promise<void> {
  await index.replaceDocument(uri, fileRecords(embedder, o.account ?? account, uri, content, o));
}

const filler = [
  'Compost needs a balance of green and brown material, turned every few weeks.',
  'Raised beds warm up earlier in spring and drain better after heavy rain.',
  'Mulch keeps the soil moist through dry spells and suppresses weeds.',
  'Tomatoes want full sun, deep watering and a sturdy stake or cage.',
  'Rotate crops each season so that soil-borne diseases do not build up.',
  'Worm castings are a gentle fertiliser that seedlings tolerate well.',
];

/** A document far above the passage budget, with one distinctive section near the end. */
export function longGuide(): string {
  const paras: string[] = ['# Gardening handbook', 'A practical handbook for the allotment, season by season.'];
  for (let s = 1; s <= 4; s++) {
    paras.push(`## Chapter ${s}`);
    for (let i = 0; i < 6; i++) paras.push(`${filler[(s + i) % filler.length]} ${filler[(s * 2 + i) % filler.length]}`);
  }
  paras.push('## Wildlife appendix');
  paras.push('Every year the great zebra migration crosses the Serengeti plains, following the rains and the fresh grass.');
  return paras.join('\n\n');
}

/** The files of the shared corpus (account `acme` unless stated), by URI. */
export const ALICE = 'viking://user/alice';
export const CAROL = 'viking://user/carol';
export const EXPIRED_AT = Date.parse('2026-01-01T00:00:00.000Z');

/** Seed the corpus; returns the embedder used. */
export async function seedCorpus(index: VectorIndex): Promise<LexicalEmbedder> {
  const e = new LexicalEmbedder({ dimension: index.dimension });
  const put = (uri: string, content: string, o: FileOptions = {}) => writeFile(index, e, 'acme', uri, content, o);
  await put(
    `${ALICE}/memories/events/2026/07/14/launch.md`,
    '# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter\n<!-- MEMORY_FIELDS {"kind":"event"} -->',
  );
  await put(`${ALICE}/memories/entities/openviking.md`, 'OpenViking: context database for AI agents.');
  await put(`${ALICE}/memories/preferences/style.md`, 'Prefers TypeScript strict mode and never uses any.');
  await put(`${ALICE}/memories/preferences/饮食.md`, '喜欢吃四川火锅，不吃香菜。');
  await put(`${ALICE}/memories/profile.md`, 'Alice is a platform engineer who likes hiking.');
  await put(`${ALICE}/peers/bob/memories/events/trip.md`, 'Bob went hiking in the Alps last summer with his brother.');
  await put(`${ALICE}/peers/dave/memories/events/hike.md`, 'Dave went hiking on the Alps glacier trail in June.');
  await put(`${ALICE}/resources/notes.md`, 'Personal notes about the quarterly budget review meeting.');
  await put('viking://resources/docs/api.md', '# Search API\n\nHTTP API reference for the search endpoints: find, search and recall.');
  await put('viking://resources/docs/.abstract.md', 'Documentation of the ctxmesh HTTP API and its search endpoints.');
  await put('viking://resources/docs/.overview.md', '---\ndirectory: docs\n---\n# Docs\nReference pages for the HTTP search API.');
  await put('viking://resources/guide/handbook.md', longGuide());
  await put('viking://resources/中文/数据库.md', '向量数据库支持混合检索，结合稠密向量和词法索引。');
  await put('viking://resources/ops/runbook.md', 'Runbook: restart the ingest workers when the queue backs up.', { tags: ['env=prod', 'team=search'] });
  await put('viking://resources/ops/old-policy.md', 'Retired on-call policy: page the whole team for every alert.', { validTo: EXPIRED_AT });
  await put('viking://agent/skills/deploy.md', 'Skill: deploy the service to Kubernetes with kustomize overlays.');
  await put(`${CAROL}/memories/events/secret.md`, 'Carol drafted the secret rocket launch plan.');
  // Another tenant with the same user id and a near-identical memory: never visible to acme.
  await put(`${ALICE}/memories/events/2026/07/14/launch-globex.md`, '# Summary\nShipped the stdio MCP proxy.', { account: 'globex' });
  return e;
}
