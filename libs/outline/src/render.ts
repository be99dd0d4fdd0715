import type { Node, Query } from '@vscode/tree-sitter-wasm';
import { baseName, type LanguageSpec, type Span } from './languages';

/** Definition kinds a tag query can capture (`@definition.<kind>`). */
export type DefinitionKind = 'class' | 'module' | 'function' | 'type';

/** Bounds on what one outline may contain. */
export interface RenderLimits {
  /** Definition lines at most; the rest is summarised in one `# … N more definitions` line. */
  maxDefinitions: number;
  /** Characters per definition line at most (longer lines end in `…`). */
  maxLineChars: number;
}

// When one node is captured under several kinds (a Go struct matches the class and the type
// pattern), the richer kind wins.
const KIND_RANK: Record<DefinitionKind, number> = { class: 0, module: 1, function: 2, type: 3 };

interface Definition {
  node: Node;
  kind: DefinitionKind;
}

interface Placed {
  /** The definition. */
  def: Definition;
  /** Indentation level. */
  depth: number;
  /** Nothing inside this definition is listed (functions and leaf types). */
  closed: boolean;
  /** Skipped (local to a function) — its contents are skipped too. */
  skipped: boolean;
}

function kindOf(captureName: string): DefinitionKind | null {
  if (!captureName.startsWith('definition.')) return null;
  const k = captureName.slice('definition.'.length);
  return k === 'class' || k === 'module' || k === 'function' || k === 'type' ? k : null;
}

/** Definitions captured by the tag query, de-duplicated, in source order (outer before inner). */
export function collectDefinitions(query: Query, root: Node): Definition[] {
  const byId = new Map<number, Definition>();
  for (const cap of query.captures(root)) {
    const kind = kindOf(cap.name);
    if (!kind) continue;
    const prev = byId.get(cap.node.id);
    if (!prev || KIND_RANK[kind] < KIND_RANK[prev.kind]) byId.set(cap.node.id, { node: cap.node, kind });
  }
  return [...byId.values()].sort(
    (a, b) => a.node.startIndex - b.node.startIndex || b.node.endIndex - a.node.endIndex,
  );
}

/** Source `[start, end)` without the `removes` spans. */
function cut(source: string, start: number, end: number, removes: Span[]): string {
  const spans = removes
    .filter((r) => r.end > start && r.start < end)
    .sort((a, b) => a.start - b.start);
  let out = '';
  let at = start;
  for (const r of spans) {
    if (r.start > at) out += source.slice(at, r.start);
    at = Math.max(at, r.end);
  }
  if (at < end) out += source.slice(at, end);
  return out;
}

/** Collapse whitespace and tidy the punctuation a multi-line parameter list leaves behind. */
export function tidy(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/([([]) /g, '$1')
    .replace(/ ([)\]])/g, '$1')
    .replace(/,([)\]])/g, '$1')
    .trim();
}

/** Cut `text` to `max` characters (code-point safe), marking the cut with `…`. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  // Never split a surrogate pair.
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

function collectNoise(
  spec: LanguageSpec,
  node: Node,
  end: number,
  member: boolean,
  direct: boolean,
  removes: Span[],
): void {
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (!c) continue;
    if (c.startIndex >= end) break;
    if (spec.noise.has(c.type)) {
      removes.push({ start: c.startIndex, end: c.endIndex });
    } else if (direct && member && !c.isNamed && spec.memberKeywords.has(c.type)) {
      removes.push({ start: c.startIndex, end: c.endIndex });
    } else if (c.childCount > 0) {
      // Modifier lists hold the keywords of the definition itself; elsewhere only noise matters.
      collectNoise(spec, c, end, member, direct && spec.descend.has(c.type), removes);
    }
  }
}

/**
 * The header of one definition: the source from its start up to its body, without noise
 * (comments, decorators, annotations), visibility keywords and — for members — the function
 * keyword, whitespace-collapsed and with the language's trailing punctuation stripped.
 */
export function headerOf(spec: LanguageSpec, node: Node, source: string, member: boolean, removes: Span[]): string {
  let text = spec.header?.(node, source) ?? null;
  if (text === null) {
    const body = spec.body(node);
    let end = body && body.startIndex >= node.startIndex ? body.startIndex : node.endIndex;
    // In a definition the parser had to repair, the signature stops where the damage starts.
    for (let i = 0; i < node.childCount; i++) {
      const c = node.child(i);
      if (c && c.startIndex < end && (c.isError || c.isMissing)) {
        end = c.startIndex;
        break;
      }
    }
    const all = [...removes];
    collectNoise(spec, node, end, member, true, all);
    text = cut(source, node.startIndex, end, all);
  }
  text = tidy((spec.prefix?.(node) ?? '') + text);
  return text.replace(spec.trailing, '').trim();
}

/**
 * Render the outline of one parsed file: the header line, then one line per definition in source
 * order; members of a `class` definition get a visibility marker and one indent level per
 * enclosing container; definitions inside functions or leaf types are left out. Returns "" when
 * there is no definition.
 */
export function renderOutline(
  spec: LanguageSpec,
  query: Query,
  root: Node,
  source: string,
  filename: string,
  limits: RenderLimits,
): string {
  const defs = collectDefinitions(query, root);
  const placed = new Map<number, Placed>();
  const lines: string[] = [];
  let omitted = 0;
  for (const def of defs) {
    let container: Placed | null = null;
    for (let p = def.node.parent; p && !container; p = p.parent) container = placed.get(p.id) ?? null;
    if (container && (container.skipped || container.closed)) {
      placed.set(def.node.id, { def, depth: 0, closed: true, skipped: true });
      continue;
    }
    const member = container?.def.kind === 'class';
    const depth = container ? container.depth + 1 : 0;
    placed.set(def.node.id, { def, depth, closed: def.kind === 'function' || def.kind === 'type', skipped: false });
    if (lines.length >= limits.maxDefinitions) {
      omitted++;
      continue;
    }
    const vis = spec.visibility(def.node, member ? container!.def.node : null);
    const header = headerOf(spec, def.node, source, member, vis.remove);
    if (header === '') continue;
    const line = `${'  '.repeat(depth)}${member ? `${vis.marker} ` : ''}${header}`;
    lines.push(clip(line, limits.maxLineChars));
  }
  if (lines.length === 0) return '';
  if (omitted > 0) lines.push(`# … ${omitted} more definitions`);
  return [`# ${baseName(filename)} [aider-repomap-lite, compact]`, ...lines].join('\n');
}
