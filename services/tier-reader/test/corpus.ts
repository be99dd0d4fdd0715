/**
 * Test corpus written the way the indexer writes it (the indexing data model): one document
 * point per file (body = the content as written), passage points `U#p<i>` for long documents,
 * directory sidecars at levels 0/1, ownership and context type derived from the URI.
 */
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

/** A deterministic stand-in vector (tier reads never search). */
function vector(dim: number, text: string): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < text.length; i++) v[i % dim] += (text.charCodeAt(i) % 7) - 3;
  v[0] += 1;
  return v;
}

/** The records of one written file. */
export function fileRecords(dim: number, account: string, uri: string, content: string): NodeRecord[] {
  const { user, peer } = ownershipOf(uri);
  const base = {
    docUri: uri,
    parentUri: uri.slice(0, uri.lastIndexOf('/')),
    contextType: contextTypeOf(uri),
    category: categoryOfUri(uri),
    account,
    owner: user,
    peer,
    workspace: 'default',
    subject: '',
    tags: [],
    createdAt: Date.parse('2026-07-01T00:00:00.000Z'),
    updatedAt: Date.parse('2026-07-10T00:00:00.000Z'),
    validFrom: null,
    validTo: null,
    title: uri.slice(uri.lastIndexOf('/') + 1),
    contentHash: `h${content.length}-${Buffer.from(content).toString('base64').slice(-12)}`,
    links: [],
    vector: vector(dim, content),
  };
  if (uri.endsWith('/.abstract.md')) return [{ ...base, uri, level: 0, abstract: content.trim(), overview: '', body: content, passageIndex: 0, lexicalText: content }];
  if (uri.endsWith('/.overview.md')) {
    let overview = '';
    try {
      overview = stripDirectoryFrontMatter(content);
    } catch {
      overview = '';
    }
    return [{ ...base, uri, level: 1, abstract: '', overview, body: content, passageIndex: 0, lexicalText: content }];
  }
  const abstract = isMemoryUri(uri) ? stripMemoryFields(content) : computeAbstract(uri, content);
  const overview = extractOverview({ uri, isDirectory: false, raw: content }, prepareBody(uri, false, content));
  const doc: NodeRecord = { ...base, uri, level: 2, abstract, overview, body: content, passageIndex: 0, lexicalText: `${abstract}\n${overview}` };
  if (estimateTokens(content) <= 512) return [doc];
  const parts = content.split(/\n\s*\n/);
  const passages: NodeRecord[] = [];
  let acc = '';
  const flush = () => {
    if (acc.trim() === '') return;
    const i = passages.length + 1;
    passages.push({ ...base, uri: `${uri}#p${i}`, level: 2, abstract: '', overview: '', body: acc.trim(), passageIndex: i, lexicalText: acc.trim() });
    acc = '';
  };
  for (const p of parts) {
    if (acc && estimateTokens(`${acc}\n\n${p}`) > 512) flush();
    acc = acc ? `${acc}\n\n${p}` : p;
  }
  flush();
  return [doc, ...passages];
}

export const ALICE = 'viking://user/alice';
export const CAROL = 'viking://user/carol';
export const EVENT = `${ALICE}/memories/events/2026/07/14/launch.md`;
export const EVENT_BODY = '# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter\n<!-- MEMORY_FIELDS {"kind":"event"} -->';
export const LONG = 'viking://resources/guide/handbook.md';
export const CODE = 'viking://resources/src/server.ts';
export const CODE_BODY = 'export class Server {\n  start(port: number): void {}\n}\n\nexport function main(): void {}\n';

/** A document far above the passage budget. */
export function longGuide(): string {
  const paras = ['# Gardening handbook', 'A practical handbook for the allotment, season by season.'];
  for (let i = 0; i < 40; i++) paras.push(`Paragraph ${i}: compost, mulch and raised beds keep the soil alive through every season of the year.`);
  return paras.join('\n\n');
}

/** Seed the corpus (account `acme`, plus one `globex` node). */
export async function seedCorpus(index: VectorIndex): Promise<void> {
  const put = (uri: string, content: string, account = 'acme') => index.replaceDocument(uri, fileRecords(index.dimension, account, uri, content));
  await put(EVENT, EVENT_BODY);
  await put(`${ALICE}/memories/entities/openviking.md`, 'OpenViking: context database for AI agents.');
  await put(`${ALICE}/memories/preferences/饮食.md`, '# Summary\n喜欢吃四川火锅。\n\n# 细节\n不吃香菜。');
  await put(`${ALICE}/peers/bob/memories/events/trip.md`, '# Summary\nBob hiked the Alps.\n\n# ChatLog:\nlong story');
  await put(`${ALICE}/peers/dave/memories/events/hike.md`, '# Summary\nDave hiked the glacier trail.');
  await put('viking://resources/docs/api.md', '# Search API\n\nHTTP API reference for the search endpoints.');
  await put('viking://resources/docs/.abstract.md', 'Documentation of the HTTP API.');
  await put('viking://resources/docs/.overview.md', '---\ndirectory: docs\n---\n# Docs\nReference pages for the HTTP search API.');
  await put('viking://resources/broken/.overview.md', '---\ntitle: missing the directory key\n---\n# Broken');
  await put('viking://resources/broken/readme.md', 'A directory whose overview front matter is refused.');
  await put(LONG, longGuide());
  await put(CODE, CODE_BODY);
  await put('viking://agent/skills/deploy.md', 'Skill: deploy the service to Kubernetes.');
  await put(`${CAROL}/memories/events/secret.md`, '# Summary\nCarol drafted the secret rocket plan.');
  await put(`${ALICE}/memories/events/globex.md`, '# Summary\nA globex memory.', 'globex');
}
