import type { NodeRecord, NodeSummary, Visibility } from '../ports/vector-index';
import type { CacheRow } from './scan-cache';

/** Columns of a search hit's or a summary read's `vi_nodes` row. */
export const SUMMARY_COLS =
  'id, uri, doc_uri, parent_uri, context_type, category, level, account, owner, peer, workspace, subject, tags, created_at, updated_at, valid_from, valid_to, title, abstract, content_hash, passage_index, links';
/** Columns of a content read (a tier's text). */
export const CONTENT_COLS = SUMMARY_COLS + ', overview, body';
/** Columns of a full read. */
export const FULL_COLS = CONTENT_COLS + ', lexical_text';

/** A `vi_nodes` row as read (the text columns only when selected). */
export interface NodeRow {
  id: number;
  uri: string;
  doc_uri: string;
  parent_uri: string;
  context_type: string;
  category: string;
  level: number;
  account: string;
  owner: string;
  peer: string;
  workspace: string;
  subject: string;
  tags: string;
  created_at: number;
  updated_at: number;
  valid_from: number | null;
  valid_to: number | null;
  title: string;
  abstract: string;
  content_hash: string;
  passage_index: number;
  links: string;
  overview?: string;
  body?: string;
  lexical_text?: string;
}


/** The port summary of a row. */
export function toSummary(r: NodeRow, withOverview: boolean): NodeSummary {
  const s: NodeSummary = {
    uri: r.uri,
    docUri: r.doc_uri,
    parentUri: r.parent_uri,
    contextType: r.context_type as NodeSummary['contextType'],
    category: r.category,
    level: r.level,
    account: r.account,
    owner: r.owner,
    peer: r.peer,
    workspace: r.workspace,
    subject: r.subject,
    tags: JSON.parse(r.tags) as string[],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    validFrom: r.valid_from,
    validTo: r.valid_to,
    title: r.title,
    abstract: r.abstract,
    contentHash: r.content_hash,
    passageIndex: r.passage_index,
    links: JSON.parse(r.links) as string[],
  };
  if (withOverview && r.overview !== undefined) s.overview = r.overview;
  return s;
}

/** A vector as a blob for `vi_vec` (no copy). */
export function vecBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** A `vi_vec` blob as a vector (a copy). */
export function blobVec(b: Uint8Array): Float32Array {
  // Copy: the buffer belongs to better-sqlite3 and may not be 4-byte aligned.
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

/** The text indexed lexically for a record. */
export function lexicalSource(r: Pick<NodeRecord, 'lexicalText' | 'abstract' | 'body' | 'title'>): string {
  if (r.lexicalText && r.lexicalText.trim() !== '') return r.lexicalText;
  return r.abstract === r.body ? r.body : `${r.abstract}\n${r.body}`;
}

/** A scan-cache row of a `vi_nodes` row, with its `embedding` when joined (else the vector is set later). */
export function toCacheRow(r: Record<string, unknown>): CacheRow {
  return {
    id: r.id as number,
    uri: r.uri as string,
    docUri: r.doc_uri as string,
    contextType: r.context_type as string,
    category: r.category as string,
    level: r.level as number,
    account: r.account as string,
    owner: r.owner as string,
    peer: r.peer as string,
    workspace: r.workspace as string,
    subject: r.subject as string,
    tags: r.tags === '[]' ? [] : (JSON.parse(r.tags as string) as string[]),
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
    validFrom: r.valid_from as number | null,
    validTo: r.valid_to as number | null,
    vector: r.embedding ? blobVec(r.embedding as Buffer) : null,
  };
}

/** Visibility of one stored row to a caller that names it explicitly (get/getDocument/exists). */
export function visibleRow(r: NodeRow, vis: Visibility): boolean {
  if (r.account !== vis.account) return false;
  if (vis.workspace !== null && r.workspace !== vis.workspace) return false;
  if (r.owner === '') return true;
  if (r.owner === vis.user) return r.peer === '' || vis.openPeers || (vis.actorPeer !== null && r.peer === vis.actorPeer);
  return vis.allUsers;
}

