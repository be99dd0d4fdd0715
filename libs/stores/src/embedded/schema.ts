import { lexicalTerms } from '@ctxmesh/embedder';
import { IndexDimensionMismatchError } from '../ports/errors';
import type { EmbeddedDb } from './db';
import { LexicalIndex, type LexicalRow, ensureLexicalTables } from './lexical-index';
import { type TermCounts, decodeTermCounts, termCounts } from '../ranking/terms';
import { lexicalSource } from './rows';
import { IndexSchemaMismatchError } from '../ports/errors';

export { IndexSchemaMismatchError };

/**
 * Version of the table layout below. Version 2 (URIs unique across accounts, document
 * frequencies shared by every account), version 3 (an FTS5 table as the lexical index),
 * version 4 (the block-max index without its tail of pending rows) and version 5 (`vi_terms`
 * holding every term) are upgraded in place; any other version is refused — a file of version 5
 * may hold pending rows that a version-4 reader would not see, and a version-5 reader would read
 * a version-6 file's longer terms as absent from every row.
 *
 * Version 6: `vi_terms` keeps the either-class document frequencies of one-code-point terms
 * only (a CJK character or a one-character word, the only terms that can be in both classes);
 * a longer term's either-class frequency is its main-class one, which `vi_lex_terms` keeps. A
 * write upserted a `vi_terms` row per distinct term of every row (a third of a long page's
 * group commit); now it upserts a handful.
 */
export const SCHEMA_VERSION = '6';

/** Versions {@link migrateSchema} upgrades in place. */
const UPGRADABLE = ['2', '3', '4', '5'];

/**
 * Columns of `vi_nodes`. A point's identity is (account, uri): account-wide URIs such as
 * `viking://resources/…` repeat in every account (the account is not part of a URI).
 */
const NODE_COLUMNS = `
  id INTEGER PRIMARY KEY,
  uri TEXT NOT NULL,
  doc_uri TEXT NOT NULL,
  parent_uri TEXT NOT NULL,
  context_type TEXT NOT NULL,
  category TEXT NOT NULL,
  level INTEGER NOT NULL,
  account TEXT NOT NULL,
  owner TEXT NOT NULL,
  peer TEXT NOT NULL,
  workspace TEXT NOT NULL,
  subject TEXT NOT NULL,
  tags TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  valid_from INTEGER,
  valid_to INTEGER,
  title TEXT NOT NULL,
  abstract TEXT NOT NULL,
  overview TEXT NOT NULL,
  body TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  passage_index INTEGER NOT NULL,
  links TEXT NOT NULL,
  lexical_text TEXT NOT NULL`;

/** Column names of `vi_nodes`, in declaration order (for the schema-2 upgrade copy). */
const NODE_COLUMN_NAMES = NODE_COLUMNS.split(',').map((c) => c.trim().split(/\s+/)[0]).join(', ');

/**
 * Create or check the vector index's tables in `db` (one transaction per upgrade).
 * @throws IndexDimensionMismatchError when the file holds an index of another dimension
 * @throws IndexSchemaMismatchError when it holds another, unsupported table layout
 */
export function migrateSchema(db: EmbeddedDb, dimension: number): void {
  const d = dimension;
  db.exec('CREATE TABLE IF NOT EXISTS vi_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;');
  const meta = (key: string) => (db.prepare('SELECT value FROM vi_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  const dim = meta('dimension');
  if (dim !== undefined && Number(dim) !== d) throw new IndexDimensionMismatchError(Number(dim), d);
  if (meta('schema') === '2') {
    // Re-read inside the write lock: another connection may have upgraded the file meanwhile.
    db.transaction(() => {
      if (meta('schema') === '2') upgradeFrom2(db);
    }).immediate();
  }
  const schema = meta('schema');
  if (schema !== undefined && !UPGRADABLE.includes(schema) && schema !== SCHEMA_VERSION) throw new IndexSchemaMismatchError(schema, SCHEMA_VERSION);
  db.exec(`
    CREATE TABLE IF NOT EXISTS vi_nodes(${NODE_COLUMNS});
    CREATE UNIQUE INDEX IF NOT EXISTS vi_nodes_key ON vi_nodes(account, uri);
    CREATE INDEX IF NOT EXISTS vi_nodes_doc ON vi_nodes(account, doc_uri, passage_index);
    CREATE TABLE IF NOT EXISTS vi_changes(seq INTEGER PRIMARY KEY AUTOINCREMENT, node_id INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS vi_terms(account TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY(account, term)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS vi_bags(id INTEGER PRIMARY KEY, uri TEXT NOT NULL, content_hash TEXT NOT NULL, terms TEXT NOT NULL);
    CREATE VIRTUAL TABLE IF NOT EXISTS vi_vec USING vec0(embedding float[${d}] distance_metric=cosine);
  `);
  // Schema 4 → 5 is this: the tail's tables and the terms' merge stamp (an empty tail).
  ensureLexicalTables(db);
  if (schema === '3') {
    db.transaction(() => {
      if (meta('schema') === '3') upgradeFrom3(db);
    }).immediate();
  }
  if (schema !== undefined && schema !== SCHEMA_VERSION) {
    // 4 → 5 was the tail's tables (above); 5 → 6 drops the longer terms' `vi_terms` rows
    // (SQLite's length() counts the characters of a text). Under the write lock, re-checked.
    db.transaction(() => {
      const now = meta('schema');
      if (now === undefined || now === SCHEMA_VERSION) return;
      db.exec('DELETE FROM vi_terms WHERE length(term) > 1');
      db.prepare("UPDATE vi_meta SET value = ? WHERE key = 'schema'").run(SCHEMA_VERSION);
    }).immediate();
  }
  db.prepare("INSERT OR IGNORE INTO vi_meta(key, value) VALUES ('dimension', ?), ('schema', ?)").run(String(d), SCHEMA_VERSION);
}

/**
 * Schema 2 → 3, inside the caller's write transaction: rebuild `vi_nodes` without the
 * file-wide `UNIQUE(uri)` (row ids are kept, so `vi_vec`, `vi_fts` and the change log stay
 * valid), and recount the lexical document frequencies per account. Costs one pass over the
 * rows (seconds at 100k points), once.
 */
function upgradeFrom2(db: EmbeddedDb): void {
  db.exec(`
    CREATE TABLE vi_nodes_v3(${NODE_COLUMNS});
    INSERT INTO vi_nodes_v3(${NODE_COLUMN_NAMES}) SELECT ${NODE_COLUMN_NAMES} FROM vi_nodes;
    DROP TABLE vi_nodes;
    ALTER TABLE vi_nodes_v3 RENAME TO vi_nodes;
    DROP TABLE IF EXISTS vi_terms;
    CREATE TABLE vi_terms(account TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY(account, term)) WITHOUT ROWID;
  `);
  const df = new Map<string, Map<string, number>>();
  const rows = db.prepare('SELECT account, lexical_text, abstract, body, title FROM vi_nodes').iterate() as Iterable<{
    account: string;
    lexical_text: string;
    abstract: string;
    body: string;
    title: string;
  }>;
  for (const r of rows) {
    const { main, minor } = lexicalTerms(lexicalSource({ lexicalText: r.lexical_text, abstract: r.abstract, body: r.body, title: r.title }));
    let counts = df.get(r.account);
    if (!counts) df.set(r.account, (counts = new Map()));
    for (const t of new Set([...main, ...minor])) counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  const ins = db.prepare('INSERT INTO vi_terms(account, term, df) VALUES (?, ?, ?)');
  for (const [account, counts] of df) for (const [term, n] of counts) ins.run(account, term, n);
  db.prepare("UPDATE vi_meta SET value = '3' WHERE key = 'schema'").run();
}

/** Rows read and indexed at a time by the schema-3 upgrade. */
const UPGRADE_PAGE = 2_000;

/**
 * Schema 3 → 5 (then 6, by the caller), inside the caller's write transaction: build the block-max lexical index
 * (`vi_lex_*`) from every row's stored term counts (`vi_bags`; a row without them is
 * re-tokenised), in row id order, straight into its blocks (its tail starts empty), and drop
 * the FTS5 table it replaces. One pass over the rows.
 */
function upgradeFrom3(db: EmbeddedDb): void {
  // Start from empty tables, whatever a failed or foreign attempt left in them.
  db.exec(`DELETE FROM vi_lex_blocks; DELETE FROM vi_lex_terms; DELETE FROM vi_lex_rows; DELETE FROM vi_lex_pending;
    UPDATE vi_lex_tail SET merge_ver = 0, phase = 0;`);
  const lex = new LexicalIndex(db);
  // Pages by id: better-sqlite3 cannot write while a statement of the same connection iterates.
  const page = db.prepare(
    `SELECT n.id, n.account, b.terms,
       CASE WHEN b.terms IS NULL THEN n.lexical_text END AS lexical_text, CASE WHEN b.terms IS NULL THEN n.abstract END AS abstract,
       CASE WHEN b.terms IS NULL THEN n.body END AS body, CASE WHEN b.terms IS NULL THEN n.title END AS title
     FROM vi_nodes n LEFT JOIN vi_bags b ON b.id = n.id AND b.uri = n.uri AND b.content_hash = n.content_hash
     WHERE n.id > ? ORDER BY n.id LIMIT ${UPGRADE_PAGE}`,
  );
  let after = 0;
  let batch: LexicalRow[] = [];
  do {
    const rows = page.all(after) as StoredTermsRow[];
    batch = rows.map((r) => ({ id: r.id, account: r.account, ...storedTermCounts(r) }));
    // Straight into the blocks: a whole file at once is what a merge is for, without the tail.
    lex.addMerged(batch);
    if (rows.length > 0) after = rows[rows.length - 1]!.id;
  } while (batch.length === UPGRADE_PAGE);
  db.exec('DROP TABLE IF EXISTS vi_fts');
  // Version 5; migrateSchema then takes it to the current one.
  db.prepare("UPDATE vi_meta SET value = '5' WHERE key = 'schema'").run();
}

/** A row's stored term counts (`vi_bags.terms`), or its text columns where it has none. */
export interface StoredTermsRow {
  id: number;
  account: string;
  terms: string | null;
  lexical_text: string | null;
  abstract: string | null;
  body: string | null;
  title: string | null;
}

/** The term counts of a row: decoded from `vi_bags`, or — rows written without them — from its text. */
export function storedTermCounts(r: StoredTermsRow): TermCounts {
  if (r.terms !== null) {
    try {
      return decodeTermCounts(r.terms);
    } catch {
      // Not written by encodeTermCounts: fall back to the text.
    }
  }
  return termCounts(lexicalTerms(lexicalSource({ lexicalText: r.lexical_text ?? '', abstract: r.abstract ?? '', body: r.body ?? '', title: r.title ?? '' })));
}
