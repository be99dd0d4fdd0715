/**
 * The indexing data model (DESIGN §5; the shared model of indexer, gather and tier-reader):
 * one document point per written file, passage points for long documents, directory
 * sidecars as level-0/1 points. Pure: vectors are added by the caller from `embedText`.
 */
import {
  FrontMatterError,
  SCHEME,
  categoryOfUri,
  computeAbstract,
  contextTypeOf,
  estimateTokens,
  extractOverview,
  isMemoryUri,
  normalizeUri,
  ownershipOf,
  prepareBody,
  pyStrip,
  stripDirectoryFrontMatter,
  stripMemoryFields,
  type CodeOutliner,
} from '@ctxmesh/kernel';
import type { NodeRecord } from '@ctxmesh/stores';
import { MAX_PASSAGE_TOKENS, chunkPassages } from './chunk';

/** A record before embedding: every field but the vector, plus the text to embed. */
export type PendingRecord = Omit<NodeRecord, 'vector'> & {
  /** Text the dense vector is computed from (also the lexical text). */
  embedText: string;
};

/** Inputs of {@link buildRecords}. */
export interface DocumentInput {
  /** Written file URI (normalised). */
  uri: string;
  /** Full content after the write. */
  content: string;
  account: string;
  workspace: string;
  subject: string;
  tags: string[];
  validFrom: number | null;
  validTo: number | null;
  /** Creation time (kept from an earlier version), ms since epoch. */
  createdAt: number;
  /** Time of this write, ms since epoch. */
  updatedAt: number;
  /** Version hash shared by every point of the document. */
  contentHash: string;
}

/** Options of {@link buildRecords}. */
export interface BuildOptions {
  /** Code outliner for code overviews (§4.4 rule 2); absent → code falls through to later rules. */
  outliner?: CodeOutliner | null;
  /** Passage size limit, estimated tokens. @default 512 */
  maxPassageTokens?: number;
}

/** Which directory sidecar a URI is, if any. */
export function sidecarKind(uri: string): 'abstract' | 'overview' | null {
  if (uri.endsWith('/.abstract.md')) return 'abstract';
  if (uri.endsWith('/.overview.md')) return 'overview';
  return null;
}

/** Parent directory of a URI (`viking://resources/a/b.md` → `viking://resources/a`). */
export function parentUriOf(uri: string): string {
  const i = uri.lastIndexOf('/');
  return i < SCHEME.length ? uri : uri.slice(0, i);
}

/** Last path segment of a URI. */
export function fileNameOf(uri: string): string {
  return uri.slice(uri.lastIndexOf('/') + 1);
}

/** Passage URI `doc#p<i>` (i ≥ 1). */
export function passageUri(docUri: string, i: number): string {
  return `${docUri}#p${i}`;
}

const TITLE_HEADING = /^#{1,6}[ \t]+(.+?)[ \t#]*$/gm;
const PROSE_FILE = /(\.(md|markdown|mdx|txt))$|^[^.]+$/i;

/**
 * Title of a node: the first markdown heading of a prose file (other than a memory's
 * `Summary` section heading), else the file name. Code files never take a `# comment` as title.
 */
export function titleOf(uri: string, body: string): string {
  const name = fileNameOf(uri);
  if (PROSE_FILE.test(name)) {
    TITLE_HEADING.lastIndex = 0;
    for (const m of body.matchAll(TITLE_HEADING)) {
      const t = m[1]!.trim();
      if (t !== '' && t.toLowerCase() !== 'summary') return t;
    }
  }
  return name;
}

const LINK = /viking:\/\/[^\s<>"'`)\]]+/g;
/** Most links kept per node. */
export const MAX_LINKS = 256;

/**
 * `viking://` URIs found in a body (graph assist): as §8.2 matches citations, minus trailing
 * sentence punctuation and markdown emphasis, without fragments, normalised, de-duplicated in
 * order of appearance, without the node itself; at most {@link MAX_LINKS}.
 */
export function extractLinks(body: string, selfUri: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>([selfUri]);
  for (const m of body.matchAll(LINK)) {
    let u = m[0].replace(/[.,;:!?*_~]+$/, '');
    const hash = u.indexOf('#');
    if (hash >= 0) u = u.slice(0, hash);
    u = normalizeUri(u);
    if (u.length <= SCHEME.length || seen.has(u)) continue;
    seen.add(u);
    out.push(u);
    if (out.length === MAX_LINKS) break;
  }
  return out;
}

function joinTexts(...parts: string[]): string {
  return parts.filter((p) => p.trim() !== '').join('\n\n');
}

/**
 * Build the points of one written file (DESIGN §5):
 * - a **document point** `uri = docUri = U`, level 2, passage 0, with abstract (a memory's
 *   whole visible body; else ≤ 256 chars), overview (§4.4), the full content as body, title,
 *   links, hash, tags, times, validity, ownership and the URI's context type and category;
 * - for a body above the passage limit, **passage points** `U#p1…U#pn` (body = passage text,
 *   abstract ""), and the document point's vector then covers abstract + overview only;
 *   otherwise the document point is the single passage and its vector covers the body;
 * - a directory sidecar `D/.abstract.md` is one level-0 point whose abstract is its text,
 *   `D/.overview.md` one level-1 point whose overview is its body without front matter (a
 *   refused front matter leaves the overview empty); their type and category come from `D`.
 */
export function buildRecords(input: DocumentInput, opts: BuildOptions = {}): PendingRecord[] {
  const { uri, content } = input;
  const { user: owner, peer } = ownershipOf(uri);
  const common = {
    docUri: uri,
    parentUri: parentUriOf(uri),
    contextType: contextTypeOf(uri),
    category: categoryOfUri(uri),
    account: input.account,
    owner,
    peer,
    workspace: input.workspace || 'default',
    subject: input.subject,
    tags: input.tags,
    createdAt: input.createdAt,
    updatedAt: input.updatedAt,
    validFrom: input.validFrom,
    validTo: input.validTo,
    contentHash: input.contentHash,
    links: extractLinks(content, uri),
  };
  const side = sidecarKind(uri);
  if (side !== null) {
    const title = fileNameOf(parentUriOf(uri));
    if (side === 'abstract') {
      const abstract = pyStrip(content);
      return [{ ...common, uri, level: 0, passageIndex: 0, title, abstract, overview: '', body: content, embedText: abstract || title, lexicalText: abstract || title }];
    }
    let overview = '';
    try {
      overview = stripDirectoryFrontMatter(content);
    } catch (err) {
      if (!(err instanceof FrontMatterError)) throw err;
    }
    const text = overview || pyStrip(content) || title;
    return [{ ...common, uri, level: 1, passageIndex: 0, title, abstract: '', overview, body: content, embedText: text, lexicalText: text }];
  }

  const prepared = prepareBody(uri, false, content);
  const memory = isMemoryUri(uri);
  const abstract = memory ? stripMemoryFields(content) : computeAbstract(uri, content);
  const overview = extractOverview({ uri, isDirectory: false, raw: content }, prepared, { outliner: opts.outliner ?? null });
  const title = titleOf(uri, prepared);
  const max = opts.maxPassageTokens ?? MAX_PASSAGE_TOKENS;
  const passages = estimateTokens(prepared) > max ? chunkPassages(prepared, max) : [];
  const chunked = passages.length > 1;
  // An unchunked document is its own passage: its vector covers the body. A chunked one leaves
  // the body to its passages and is found by what summarises it.
  const docText = (chunked ? joinTexts(abstract, overview) : prepared) || title;
  const out: PendingRecord[] = [
    { ...common, uri, level: 2, passageIndex: 0, title, abstract, overview, body: content, embedText: docText, lexicalText: docText },
  ];
  if (chunked) {
    passages.forEach((text, i) => {
      out.push({ ...common, uri: passageUri(uri, i + 1), level: 2, passageIndex: i + 1, title, abstract: '', overview: '', body: text, embedText: text, lexicalText: text });
    });
  }
  return out;
}
