/**
 * Tier texts (context-contract §4.1, §4.4): body preparation, overview extraction by source
 * type, and the abstract the indexer stores. Regexes emulate Python's `re` (multiline `^`/`$`
 * only at `\n`, `.` matching `\r`, Unicode `\s` and `\d`), because the reference kernel's
 * answers depend on them.
 */
import { parseDocument } from 'yaml';
import { FrontMatterError } from '../errors';
import { PY_WS_CLASS, codePointLength, codePointPrefix, pyCollapseWhitespace, pyLstrip, pySplitlines, pyStrip } from './python';

/**
 * A code-skeleton extractor (`libs/outline`): given a file name (last URI segment) and its
 * source, the structural skeleton, or `null`/`""` when the file is not recognised as code.
 */
export type CodeOutliner = (filename: string, source: string) => string | null | undefined;

/** Why a directory sidecar's front matter was refused (§11.2 item 5). */

// One line and its terminator (any Python `splitlines` boundary; CRLF counts once).
const LINE = /([^\n\r\x0b\f\x1c\x1d\x1e\x85\u2028\u2029]*)(?:\r\n|[\n\r\x0b\f\x1c\x1d\x1e\x85\u2028\u2029]|$)/gy;

// Python `re.sub(r"<!--\s*MEMORY_FIELDS.*?-->", "", body, flags=re.S)`.
const MEMORY_FIELDS = new RegExp(`<!--[${PY_WS_CLASS}]*MEMORY_FIELDS[\\s\\S]*?-->`, 'g');

/** True for URIs whose bodies carry the memory metadata comment (`/memories/` anywhere). */
export function isMemoryUri(uri: string): boolean {
  return uri.includes('/memories/');
}

/**
 * Remove every `<!-- MEMORY_FIELDS … -->` metadata comment from a memory body and trim
 * (Python `strip`).
 */
export function stripMemoryFields(body: string): string {
  return pyStrip(body.replace(MEMORY_FIELDS, ''));
}

/**
 * The body as the tiers see it (§4.1): `null` (failed read) → `""`; a non-directory under
 * `/memories/` loses its metadata comment; everything is trimmed (Python `strip`).
 */
export function prepareBody(uri: string, isDirectory: boolean, raw: string | null | undefined): string {
  if (raw === null || raw === undefined) return '';
  if (!isDirectory && isMemoryUri(uri)) return stripMemoryFields(raw);
  return pyStrip(raw);
}

/**
 * Parse front matter the way PyYAML's `safe_load` accepts it: YAML 1.1, duplicate keys
 * allowed (last wins), and an unknown tag is an error rather than a plain string.
 * @throws FrontMatterError `invalid_yaml`
 */
function parseFrontMatterYaml(src: string): unknown {
  let doc;
  try {
    doc = parseDocument(src, { version: '1.1', uniqueKeys: false, prettyErrors: false, logLevel: 'silent' });
  } catch (e) {
    throw new FrontMatterError('invalid_yaml', `directory overview front matter is not valid YAML: ${(e as Error).message}`);
  }
  const problem = doc.errors[0] ?? doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (problem) throw new FrontMatterError('invalid_yaml', `directory overview front matter is not valid YAML: ${problem.message}`);
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // Alias bombs and the like: refuse rather than expand.
    throw new FrontMatterError('invalid_yaml', `directory overview front matter is not valid YAML: ${(e as Error).message}`);
  }
}

/**
 * Strip the YAML front matter of a directory `.overview.md` (§4.4 rule 1). A first line of
 * exactly `---` (lines end at any Python `splitlines` boundary, so CRLF sidecars qualify)
 * opens front matter, closed by the next `---` line; the front matter must be a YAML mapping
 * with a `directory` key. Without an opening line the text is used as-is.
 * @returns the trimmed overview text
 * @throws FrontMatterError when the front matter is not closed, not YAML, not a mapping or
 *   has no `directory` key
 */
export function stripDirectoryFrontMatter(text: string): string {
  LINE.lastIndex = 0;
  const first = LINE.exec(text);
  if (!first || first[1] !== '---') return pyStrip(text);
  const fmStart = LINE.lastIndex;
  let fmEnd = -1;
  let m: RegExpExecArray | null;
  while (LINE.lastIndex < text.length && (m = LINE.exec(text)) !== null) {
    if (m[1] === '---') {
      fmEnd = m.index;
      break;
    }
  }
  const after = LINE.lastIndex;
  if (fmEnd < 0) throw new FrontMatterError('not_closed', 'directory overview front matter is not closed');
  const data = parseFrontMatterYaml(text.slice(fmStart, fmEnd));
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new FrontMatterError('not_an_object', 'directory overview front matter must be a YAML object');
  }
  if (!Object.prototype.hasOwnProperty.call(data, 'directory')) {
    throw new FrontMatterError('missing_directory', 'directory overview front matter has no directory key');
  }
  return pyStrip(text.slice(after));
}

// Multiline anchors as Python has them: `^` after "\n" only, `$` before "\n" or at the end.
const BOL = '(?<=^|\\n)';
const EOL = '(?=\\n|$)';

const SUMMARY_HEADING = new RegExp(`${BOL}#{1,3}[ \\t]*summary[ \\t]*${EOL}`, 'iu');
const SECTION_HEADING = new RegExp(`${BOL}#{1,3}[ \\t]`, 'u');
const LEGACY_SUMMARY = /^Summary:/u;
const LEGACY_END = new RegExp(
  `${BOL}(?:\\p{Nd}{4}-\\p{Nd}{2}-\\p{Nd}{2}(?:[ \\t]*\\([^\\n]*?\\))?[ \\t]*ChatLog:|ChatLog:|<!--[${PY_WS_CLASS}]*MEMORY_FIELDS)`,
  'u',
);

/**
 * The Summary of a memory body (§4.4 rule 3): the section under the first `#`–`###`
 * `Summary` heading (case-insensitive) up to the next `#`–`###` heading, trimmed; else the
 * legacy `Summary:` form at the very start, up to a `ChatLog:` line or the metadata comment,
 * with whitespace runs collapsed. `""` when neither yields text.
 */
export function extractSummary(body: string): string {
  const heading = SUMMARY_HEADING.exec(body);
  if (heading) {
    const rest = body.slice(heading.index + heading[0].length);
    const next = SECTION_HEADING.exec(rest);
    const section = pyStrip(next ? rest.slice(0, next.index) : rest);
    if (section !== '') return section;
  }
  if (LEGACY_SUMMARY.test(body)) {
    const rest = body.slice('Summary:'.length);
    const end = LEGACY_END.exec(rest);
    const text = pyCollapseWhitespace(end ? rest.slice(0, end.index) : rest);
    if (text !== '') return text;
  }
  return '';
}

const DOC_HEADING = new RegExp(`${BOL}(#{1,3})[ \\t]+([^\\n]+?)[ \\t]*${EOL}`, 'g');
const BLANK_LINE = new RegExp(`\\n[${PY_WS_CLASS}]*\\n`);

/** Maximum headings in a generic document overview. */
export const MAX_OVERVIEW_HEADINGS = 24;
/** Maximum code points of the first paragraph in a generic document overview. */
export const MAX_OVERVIEW_PARAGRAPH = 400;

/**
 * The first paragraph of a document: the first block (split on blank lines) that is
 * non-empty once lines starting with `#` (after left-trim) are dropped; not cut.
 */
export function firstParagraph(text: string): string {
  for (const block of text.split(BLANK_LINE)) {
    const kept = pySplitlines(block).filter((line) => !pyLstrip(line).startsWith('#'));
    const para = pyStrip(kept.join('\n'));
    if (para !== '') return para;
  }
  return '';
}

/**
 * The generic document overview (§4.4 rule 4): the `#`–`###` heading tree (at most 24,
 * indented two spaces per level below 1) and the first paragraph cut to 400 code points,
 * joined by a blank line, trimmed.
 */
export function documentOverview(text: string): string {
  const headings: string[] = [];
  DOC_HEADING.lastIndex = 0;
  for (const m of text.matchAll(DOC_HEADING)) {
    const level = m[1].length;
    headings.push(`${'  '.repeat(level - 1)}${m[1]} ${m[2]}`);
    if (headings.length === MAX_OVERVIEW_HEADINGS) break;
  }
  const parts: string[] = [];
  if (headings.length > 0) parts.push(headings.join('\n'));
  const para = codePointPrefix(firstParagraph(text), MAX_OVERVIEW_PARAGRAPH);
  if (para !== '') parts.push(para);
  return pyStrip(parts.join('\n\n'));
}

/** Last path segment of a URI (the file name handed to the code outliner). */
function fileNameOf(uri: string): string {
  const i = uri.lastIndexOf('/');
  return i < 0 ? uri : uri.slice(i + 1);
}

/** Inputs of {@link extractOverview}. */
export interface OverviewSource {
  /** Node URI (for a directory, the directory itself). */
  readonly uri: string;
  readonly isDirectory: boolean;
  /** Raw body: for a directory its `.overview.md` sidecar; `null` when the read failed. */
  readonly raw: string | null | undefined;
}

/** Options of {@link extractOverview} and {@link prepareTierTexts}. */
export interface OverviewOptions {
  /** Code-skeleton extractor; absent → code files fall through to the later rules. */
  readonly outliner?: CodeOutliner | null;
}

/** Texts of the body-backed tiers of one candidate. */
export interface TierTexts {
  /** §4.4 overview, `""` when unavailable. */
  readonly overview: string;
  /** Trimmed body, `""` when unavailable (always for directories). */
  readonly full: string;
  /** Set when a directory's front matter was refused; the overview is then `""`. */
  readonly overviewError?: FrontMatterError;
}

/**
 * Overview of a node by source type, first match wins (§4.4): directory sidecar without
 * front matter; code skeleton (via the outliner); memory Summary; document heading tree +
 * first paragraph (of the prepared body for a memory, of the decoded body `src.raw` otherwise).
 * @param body the prepared body ({@link prepareBody}) for files; ignored for directories
 * @throws FrontMatterError for a refused directory front matter
 */
export function extractOverview(src: OverviewSource, body: string, opts: OverviewOptions = {}): string {
  if (src.isDirectory) return src.raw === null || src.raw === undefined ? '' : stripDirectoryFrontMatter(src.raw);
  if (body === '') return '';
  if (opts.outliner) {
    const skeleton = opts.outliner(fileNameOf(src.uri), body);
    if (skeleton && pyStrip(skeleton) !== '') return pyStrip(skeleton);
  }
  if (isMemoryUri(src.uri)) {
    const summary = extractSummary(body);
    if (summary !== '') return summary;
    return documentOverview(body);
  }
  // A document's heading tree and first paragraph are read from the decoded body, as the
  // reference reads them (§4.1 trims only `full`; a memory body is trimmed for every tier):
  // a CRLF tree whose last heading ends the body keeps that heading's "\r".
  return documentOverview(src.raw ?? '');
}

/**
 * Compute the overview and full texts of one candidate from its raw body (§4.1, §4.4). Never
 * throws: a refused directory front matter is reported in `overviewError` with an empty
 * overview, so the directory is served at its next available tier.
 */
export function prepareTierTexts(
  candidate: { readonly uri: string; readonly is_directory?: boolean },
  raw: string | null | undefined,
  opts: OverviewOptions = {},
): TierTexts {
  const isDirectory = candidate.is_directory === true;
  const src: OverviewSource = { uri: candidate.uri, isDirectory, raw };
  const body = prepareBody(candidate.uri, isDirectory, raw);
  const full = isDirectory ? '' : body;
  try {
    return { overview: extractOverview(src, body, opts), full };
  } catch (e) {
    if (e instanceof FrontMatterError) return { overview: '', full, overviewError: e };
    throw e;
  }
}

/** Maximum length of an indexed abstract, in code points. */
export const MAX_ABSTRACT_CHARS = 256;

/**
 * The abstract the indexer stores for a document: its Summary section (memory bodies) or its
 * first paragraph, else the whole text, with whitespace collapsed and cut to at most
 * `maxChars` code points on a word boundary (or a character boundary when the text has no
 * space in its second half, e.g. CJK), ending with `…` when cut.
 * @param maxChars limit in code points, default {@link MAX_ABSTRACT_CHARS}
 */
export function computeAbstract(uri: string, raw: string | null | undefined, maxChars = MAX_ABSTRACT_CHARS): string {
  const body = prepareBody(uri, false, raw);
  if (body === '') return '';
  const source = extractSummary(body) || firstParagraph(body) || body;
  const text = pyCollapseWhitespace(source);
  if (codePointLength(text) <= maxChars) return text;
  if (maxChars <= 1) return codePointPrefix(text, maxChars);
  const head = codePointPrefix(text, maxChars - 1);
  const space = head.lastIndexOf(' ');
  const cut = space >= head.length / 2 ? head.slice(0, space) : head;
  return `${pyStrip(cut)}…`;
}
