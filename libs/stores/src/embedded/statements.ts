import type Database from 'better-sqlite3';
import type { EmbeddedDb } from './db';
import { CONTENT_COLS, FULL_COLS, SUMMARY_COLS } from './rows';

/**
 * Every prepared statement of the embedded vector index, prepared once per connection.
 */
export function prepareStatements(db: EmbeddedDb): Record<StatementName, Database.Statement> {
  return {
    docRows: db.prepare('SELECT id, content_hash FROM vi_nodes WHERE account = ? AND doc_uri = ?'),
    idByUri: db.prepare('SELECT id FROM vi_nodes WHERE account = ? AND uri = ?'),
    insNode: db.prepare(`INSERT INTO vi_nodes(uri, doc_uri, parent_uri, context_type, category, level, account, owner, peer, workspace, subject, tags,
      created_at, updated_at, valid_from, valid_to, title, abstract, overview, body, content_hash, passage_index, links, lexical_text)
      VALUES (@uri, @docUri, @parentUri, @contextType, @category, @level, @account, @owner, @peer, @workspace, @subject, @tags,
      @createdAt, @updatedAt, @validFrom, @validTo, @title, @abstract, @overview, @body, @contentHash, @passageIndex, @links, @lexicalText)`),
    insVec: db.prepare('INSERT INTO vi_vec(rowid, embedding) VALUES (?, ?)'),
    delNode: db.prepare('DELETE FROM vi_nodes WHERE id = ?'),
    delVec: db.prepare('DELETE FROM vi_vec WHERE rowid = ?'),
    logChange: db.prepare('INSERT INTO vi_changes(node_id) VALUES (?)'),
    subtreeIds: db.prepare(
      "SELECT id FROM vi_nodes WHERE account = @a AND (uri = @u OR doc_uri = @u OR (uri >= @u || '/' AND uri < @u || '0') OR (doc_uri >= @u || '/' AND doc_uri < @u || '0'))",
    ),
    docIds: db.prepare('SELECT id FROM vi_nodes WHERE account = @a AND (uri = @u OR doc_uri = @u)'),
    changesSince: db.prepare('SELECT seq, node_id FROM vi_changes WHERE seq > ? ORDER BY seq'),
    maxSeq: db.prepare("SELECT COALESCE(MAX(seq), 0) AS s FROM vi_changes"),
    prunedThrough: db.prepare("SELECT value FROM vi_meta WHERE key = 'pruned_through'"),
    setPruned: db.prepare("INSERT INTO vi_meta(key, value) VALUES ('pruned_through', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
    prune: db.prepare('DELETE FROM vi_changes WHERE seq <= ?'),
    cacheRowsByIds: db.prepare(`SELECT n.id, n.uri, n.doc_uri, n.context_type, n.category, n.level, n.account, n.owner, n.peer, n.workspace, n.subject,
      n.tags, n.created_at, n.updated_at, n.valid_from, n.valid_to, v.embedding
      FROM vi_nodes n JOIN vi_vec v ON v.rowid = n.id WHERE n.id IN (SELECT value FROM json_each(?))`),
    allVectors: db.prepare('SELECT rowid, embedding FROM vi_vec').raw(),
    allNodesSorted: db.prepare(`SELECT id, uri, doc_uri, context_type, category, level, account, owner, peer, workspace, subject,
      tags, created_at, updated_at, valid_from, valid_to FROM vi_nodes ORDER BY account, uri`),
    summariesByIds: db.prepare(`SELECT ${SUMMARY_COLS} FROM vi_nodes WHERE id IN (SELECT value FROM json_each(?))`),
    summariesOvByIds: db.prepare(`SELECT ${SUMMARY_COLS}, overview FROM vi_nodes WHERE id IN (SELECT value FROM json_each(?))`),
    lexTextByIds: db.prepare('SELECT id, lexical_text, abstract, body, title FROM vi_nodes WHERE id IN (SELECT value FROM json_each(?))'),
    // A row's stored term counts, or its text where it has none that match it (written before
    // the table existed, or by a writer that does not keep it and reused the id).
    bagsByIds: db.prepare(`SELECT n.id, b.terms,
      CASE WHEN b.terms IS NULL THEN n.lexical_text END AS lexical_text, CASE WHEN b.terms IS NULL THEN n.abstract END AS abstract,
      CASE WHEN b.terms IS NULL THEN n.body END AS body, CASE WHEN b.terms IS NULL THEN n.title END AS title
      FROM vi_nodes n LEFT JOIN vi_bags b ON b.id = n.id AND b.uri = n.uri AND b.content_hash = n.content_hash
      WHERE n.id IN (SELECT value FROM json_each(?))`),
    insBag: db.prepare('INSERT OR REPLACE INTO vi_bags(id, uri, content_hash, terms) VALUES (?, ?, ?, ?)'),
    delBag: db.prepare('DELETE FROM vi_bags WHERE id = ?'),
    fullByUri: db.prepare(`SELECT ${FULL_COLS} FROM vi_nodes WHERE account = ? AND uri = ?`),
    contentByUri: db.prepare(`SELECT ${CONTENT_COLS} FROM vi_nodes WHERE account = ? AND uri = ?`),
    summaryByUri: db.prepare(`SELECT ${SUMMARY_COLS} FROM vi_nodes WHERE account = ? AND uri = ?`),
    summariesByUris: db.prepare(`SELECT ${SUMMARY_COLS} FROM vi_nodes WHERE account = ? AND uri IN (SELECT value FROM json_each(?))`),
    summariesOvByUris: db.prepare(`SELECT ${SUMMARY_COLS}, overview FROM vi_nodes WHERE account = ? AND uri IN (SELECT value FROM json_each(?))`),
    fullByDoc: db.prepare(`SELECT ${FULL_COLS} FROM vi_nodes WHERE account = ? AND doc_uri = ? ORDER BY passage_index, uri`),
    vecById: db.prepare('SELECT embedding FROM vi_vec WHERE rowid = ?'),
    existsUnder: db.prepare(`SELECT ${SUMMARY_COLS} FROM vi_nodes WHERE account = @a AND (uri = @u OR (uri >= @u || '/' AND uri < @u || '0'))`),
    vocab: db.prepare('SELECT term, df FROM vi_terms WHERE account = ? AND term IN (SELECT value FROM json_each(?))'),
    termAdd: db.prepare('INSERT INTO vi_terms(account, term, df) VALUES (?, ?, ?) ON CONFLICT(account, term) DO UPDATE SET df = df + excluded.df'),
    termGone: db.prepare('DELETE FROM vi_terms WHERE account = ? AND term = ? AND df <= 0'),
    // A row's account and stored term counts (its text where it has none that match it), to un-count its terms.
    rowTerms: db.prepare(`SELECT n.id, n.account, b.terms,
      CASE WHEN b.terms IS NULL THEN n.lexical_text END AS lexical_text, CASE WHEN b.terms IS NULL THEN n.abstract END AS abstract,
      CASE WHEN b.terms IS NULL THEN n.body END AS body, CASE WHEN b.terms IS NULL THEN n.title END AS title
      FROM vi_nodes n LEFT JOIN vi_bags b ON b.id = n.id AND b.uri = n.uri AND b.content_hash = n.content_hash WHERE n.id = ?`),
    // A document is (account, doc_uri): the same document URI in two accounts is two documents.
    stats: db.prepare('SELECT COUNT(*) AS points, (SELECT COUNT(*) FROM (SELECT DISTINCT account, doc_uri FROM vi_nodes)) AS documents FROM vi_nodes'),
    statsAccount: db.prepare('SELECT COUNT(*) AS points, COUNT(DISTINCT doc_uri) AS documents FROM vi_nodes WHERE account = ?'),
  };
}

/** Names of the prepared statements. */
export type StatementName =
  | 'docRows'
  | 'idByUri'
  | 'insNode'
  | 'insVec'
  | 'delNode'
  | 'delVec'
  | 'logChange'
  | 'subtreeIds'
  | 'docIds'
  | 'changesSince'
  | 'maxSeq'
  | 'prunedThrough'
  | 'setPruned'
  | 'prune'
  | 'cacheRowsByIds'
  | 'allVectors'
  | 'allNodesSorted'
  | 'summariesByIds'
  | 'summariesOvByIds'
  | 'lexTextByIds'
  | 'bagsByIds'
  | 'insBag'
  | 'delBag'
  | 'fullByUri'
  | 'contentByUri'
  | 'summaryByUri'
  | 'summariesByUris'
  | 'summariesOvByUris'
  | 'fullByDoc'
  | 'vecById'
  | 'existsUnder'
  | 'vocab'
  | 'termAdd'
  | 'termGone'
  | 'rowTerms'
  | 'stats'
  | 'statsAccount';

/** The prepared statements of one connection. */
export type Statements = Record<StatementName, Database.Statement>;
