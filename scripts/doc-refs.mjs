#!/usr/bin/env node
// Checks that every section reference in the repository's tracked files (a section sign and
// a number: "S5.3", "context-contract S5.3", "S5.2–S5.4", where S is the section sign) names a
// section that exists in docs/. Written by hand: it is a few regular expressions over
// `git ls-files`, and no markdown link checker knows what a bare "S3.6" in services/sessions
// means. (This file writes the sign as S or \u00a7, so it never cites anything itself.)
//
// Which document a reference names (docs/README.md, "Citing the docs", says the same):
//   1. an explicit document id right before the sign, e.g. `overflow-recovery S3.6` (also
//      `context-contract.md` S1, and an id ending the previous line when the sign starts a
//      comment line);
//   2. else the document of the reference before it on the same line (`overflow-recovery
//      S1.8, S3.6`: both are overflow-recovery);
//   3. else the default of the file's path (PATH_DEFAULTS, longest prefix wins; a file of
//      docs/ cites itself).
// Also checked: `<id> "Heading words"` (retrieve-contract "Stages") must match a heading of
// that document.
//
// Usage: node scripts/doc-refs.mjs [--list] [--strict]
//   --list    print every reference and how it resolved (tab-separated)
//   --strict  also fail on a bare reference in a file that explicitly cites another document
//             (the reader cannot tell which one it means; give it a prefix)
// Exit code 1 when a reference does not resolve; one line per problem, as file:line.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const SIGN = '\u00a7';

/** Document ids and their files. An id is matched case-insensitively (`DESIGN` = `design`). */
export const DOCS = Object.freeze({
  'context-contract': 'docs/context-contract.md',
  'retrieve-contract': 'docs/retrieve-contract.md',
  'overflow-recovery': 'docs/overflow-recovery.md',
  'plugin-client': 'docs/plugin-client.md',
  'content-api': 'docs/content-api.md',
  design: 'docs/design.md',
});

/**
 * Default document of a bare reference, by path prefix (longest wins). A file of docs/ cites
 * itself by default; see {@link defaultDocFor}.
 */
export const PATH_DEFAULTS = Object.freeze([
  ['services/sessions/', 'overflow-recovery'],
  ['proto/ctxmesh/sessions/', 'overflow-recovery'],
  ['test/e2e/plugins.e2e.test.ts', 'plugin-client'],
  ['deploy/', 'design'],
  ['docker-compose.yml', 'design'],
  ['', 'context-contract'],
]);

/** Paths never scanned: generated code and lock files. */
const SKIP = [/^libs\/proto\/src\/gen\//, /(^|\/)package-lock\.json$/, /(^|\/)node_modules\//, /\.(png|jpe?g|gif|ico|wasm|db|sqlite|gz|tgz|zip|woff2?)$/i];

const ID_ALT = Object.keys(DOCS)
  .sort((a, b) => b.length - a.length)
  .join('|');
// An id right before the sign: `overflow-recovery S3.6`, `context-contract.md` S1, a markdown
// link `[plugin-client](plugin-client.md) S1.3`, or `context-contract (S1.7)`.
const PREFIX = new RegExp(`(?:^|[^\\w-])(${ID_ALT})(?:\\.md)?[\`)]?\\s*\\(?\\s*$`, 'i');
// The same at the end of a line, for a reference that starts the next comment line.
const LINE_END_ID = PREFIX;
// Nothing but comment decoration before the sign.
const DECORATION_ONLY = /^\s*(?:\/\/+|\/\*+|\*|#+|<!--)?\s*\(?\s*$/;
// A reference: the sign, a section number, optionally a range to another (`–S5.4`, `-5.4`).
const REF = new RegExp(`${SIGN}\\s?(\\d+(?:\\.\\d+)*)(?:\\s?[\u2013-]\\s?${SIGN}?(\\d+(?:\\.\\d+)*))?`, 'g');
// `retrieve-contract "Stages"`: a heading named by its words.
const NAMED = new RegExp(`(?:^|[^\\w-])(${ID_ALT})(?:\\.md)?\`?\\s*"([^"\\n]{1,60})"`, 'gi');
// `## 5. Budget`, `### 5.3 Placement`.
const HEADING = /^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s+(.*?)\s*#*\s*$/;

/** Canonical id of a matched document name. */
function idOf(name) {
  return name.toLowerCase();
}

/**
 * The numbered sections of a markdown document.
 * @param {string} markdown
 * @returns {Map<string, string>} section number (`"5.3"`) → heading title, in document order
 */
export function parseSections(markdown) {
  const out = new Map();
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const m = HEADING.exec(line);
    if (m && !out.has(m[1])) out.set(m[1], m[2]);
  }
  return out;
}

/**
 * The default document of a bare reference in `path` (repository-relative, `/`-separated).
 * @returns {string} a document id
 */
export function defaultDocFor(path) {
  for (const [id, file] of Object.entries(DOCS)) if (path === file) return id;
  let best = null;
  for (const [prefix, id] of PATH_DEFAULTS) {
    if ((path === prefix || path.startsWith(prefix)) && (best === null || prefix.length > best[0].length)) best = [prefix, id];
  }
  return best ? best[1] : 'context-contract';
}

/**
 * Every reference in one file's text.
 * @param {string} text file contents
 * @param {string} path repository-relative path (decides the default document)
 * @returns {Array<{line: number, raw: string, sections: string[], name?: string, doc: string, how: 'explicit'|'previous-line'|'list'|'default'|'named'}>}
 */
export function extractRefs(text, path) {
  const refs = [];
  const fallback = defaultDocFor(path);
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.includes(SIGN)) {
      let previous = null;
      for (const m of line.matchAll(REF)) {
        const before = line.slice(0, m.index);
        const sections = m[2] === undefined ? [m[1]] : [m[1], m[2]];
        let doc;
        let how;
        const p = PREFIX.exec(before);
        const up = i > 0 ? LINE_END_ID.exec(lines[i - 1]) : null;
        if (p) [doc, how] = [idOf(p[1]), 'explicit'];
        else if (previous === null && DECORATION_ONLY.test(before) && up) [doc, how] = [idOf(up[1]), 'previous-line'];
        else if (previous !== null) [doc, how] = [previous, 'list'];
        else [doc, how] = [fallback, 'default'];
        refs.push({ line: i + 1, raw: m[0], sections, doc, how });
        previous = doc;
      }
    }
    for (const m of line.matchAll(NAMED)) refs.push({ line: i + 1, raw: m[0].trim(), sections: [], name: m[2], doc: idOf(m[1]), how: 'named' });
  });
  return refs;
}

/**
 * Load the documents' sections.
 * @param {string} root repository root
 * @param {(file: string) => string | null} [read] file reader (null = missing)
 * @returns {Map<string, Map<string, string> | null>} id → sections, or null when the file is missing
 */
export function loadDocs(root, read = (f) => (existsSync(join(root, f)) ? readFileSync(join(root, f), 'utf8') : null)) {
  const out = new Map();
  for (const [id, file] of Object.entries(DOCS)) {
    const text = read(file);
    out.set(id, text === null ? null : parseSections(text));
  }
  return out;
}

/**
 * The problems of a set of references.
 * @param {Array<ReturnType<typeof extractRefs>[number] & {path: string}>} refs
 * @param {Map<string, Map<string, string> | null>} docs from {@link loadDocs}
 * @param {{strict?: boolean}} [opts]
 * @returns {string[]} one line per problem, `path:line: …`
 */
export function problemsOf(refs, docs, opts = {}) {
  const problems = [];
  const explicitByFile = new Map();
  for (const r of refs) {
    if (r.how !== 'explicit' && r.how !== 'previous-line' && r.how !== 'named') continue;
    if (!explicitByFile.has(r.path)) explicitByFile.set(r.path, new Set());
    explicitByFile.get(r.path).add(r.doc);
  }
  for (const r of refs) {
    const where = `${r.path}:${r.line}`;
    const sections = docs.get(r.doc);
    const via = r.how === 'default' ? `default of ${r.path}` : r.how;
    if (sections === null || sections === undefined) {
      problems.push(`${where}: ${r.raw} → ${r.doc} (${via}): ${DOCS[r.doc] ?? r.doc} does not exist`);
      continue;
    }
    if (r.how === 'named') {
      const want = r.name.toLowerCase();
      if (![...sections.values()].some((t) => t.toLowerCase().includes(want))) {
        problems.push(`${where}: ${r.raw}: no heading of ${DOCS[r.doc]} contains "${r.name}"`);
      }
      continue;
    }
    for (const s of r.sections) {
      if (!sections.has(s)) problems.push(`${where}: ${r.raw} → ${r.doc} ${SIGN}${s} (${via}): no such section in ${DOCS[r.doc]}`);
    }
    // In docs/, a bare reference always means the page itself: never ambiguous.
    if (opts.strict && r.how === 'default' && !r.path.startsWith('docs/')) {
      const others = [...(explicitByFile.get(r.path) ?? [])].filter((d) => d !== r.doc);
      if (others.length > 0) problems.push(`${where}: ${r.raw} is bare but the file also cites ${others.join(', ')}: give it a prefix`);
    }
  }
  return problems;
}

/**
 * The files to scan: tracked and new (not ignored) files, without generated code and lock files.
 * @param {string} root repository root
 */
export function listFiles(root) {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, maxBuffer: 64 << 20 });
  return [...new Set(out.toString('utf8').split('\0'))].filter((f) => f !== '' && !SKIP.some((re) => re.test(f)));
}

/**
 * Scan the repository.
 * @param {string} root
 * @returns {{refs: Array<ReturnType<typeof extractRefs>[number] & {path: string}>, files: number}}
 */
export function scan(root) {
  const refs = [];
  let files = 0;
  for (const path of listFiles(root)) {
    let buf;
    try {
      buf = readFileSync(join(root, path));
    } catch {
      continue; // deleted in the worktree but still in the index
    }
    if (buf.includes(0)) continue;
    const text = buf.toString('utf8');
    if (!text.includes(SIGN) && !NAMED.test(text)) continue;
    NAMED.lastIndex = 0;
    files++;
    for (const r of extractRefs(text, path)) refs.push({ ...r, path });
  }
  return { refs, files };
}

/** Run the check; returns the exit code. */
export function main(argv, root = resolve(import.meta.dirname, '..'), out = console) {
  const list = argv.includes('--list');
  const strict = argv.includes('--strict');
  const { refs, files } = scan(root);
  const docs = loadDocs(root);
  if (list) for (const r of refs) out.log([`${r.path}:${r.line}`, r.raw, r.doc, r.how].join('\t'));
  const problems = problemsOf(refs, docs, { strict });
  for (const p of problems) out.error(p);
  const bad = new Set(problems.map((p) => p.split(': ')[0]));
  const byHow = {};
  for (const r of refs) byHow[r.how] = (byHow[r.how] ?? 0) + 1;
  const how = Object.entries(byHow)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  const summary = `doc-refs: ${refs.length} references in ${files} files (${how}); ${problems.length} problem(s) on ${bad.size} line(s)`;
  if (problems.length > 0) out.error(summary);
  else out.log(summary);
  return problems.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2));
