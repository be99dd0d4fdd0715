import type { Node } from '@vscode/tree-sitter-wasm';

/** Languages the outliner understands (each backed by a grammar shipped in `@vscode/tree-sitter-wasm`). */
export type LanguageId =
  | 'typescript'
  | 'tsx'
  | 'javascript'
  | 'python'
  | 'go'
  | 'rust'
  | 'java'
  | 'csharp'
  | 'cpp'
  | 'ruby'
  | 'php'
  | 'bash';

/**
 * Member marker, UML style: `+` public (or the language default), `-` private, `#` protected,
 * `~` internal/package.
 */
export type Marker = '+' | '-' | '#' | '~';

/** A half-open `[start, end)` range of UTF-16 offsets into the source. */
export interface Span {
  /** First offset (inclusive). */
  start: number;
  /** Last offset (exclusive). */
  end: number;
}

/** What a language contributes to the visibility of a definition. */
export interface MemberVisibility {
  /** Marker shown before a member line. */
  marker: Marker;
  /** Source spans of visibility keywords, removed from the header (never shown as text). */
  remove: Span[];
}

/**
 * Per-language knowledge. The generic renderer (`render.ts`) does the rest: every definition's
 * header is the source from the definition's start up to its body, minus noise and visibility
 * spans, whitespace-collapsed.
 */
export interface LanguageSpec {
  /** Language id. */
  id: LanguageId;
  /** Grammar file stem: `tree-sitter-<grammar>.wasm`. */
  grammar: string;
  /** Lower-case file extensions (with the dot) mapped to this language. */
  extensions: readonly string[];
  /**
   * Tag query. Captures named `definition.<kind>` select definition nodes:
   * `class` (container whose definitions are members, shown with a marker), `module` (scope
   * whose definitions are indented but not members), `function` (function-like; a method when
   * inside a `class`), `type` (leaf: nothing inside it is listed).
   */
  query: string;
  /** Node types dropped from headers wherever they occur before the body (comments, decorators…). */
  noise: ReadonlySet<string>;
  /** Node types whose children are searched for noise and visibility (e.g. Java `modifiers`). */
  descend: ReadonlySet<string>;
  /** Anonymous keyword tokens dropped from member headers (`def`, `fn`, `function`…). */
  memberKeywords: ReadonlySet<string>;
  /** Body of a definition (header stops there), or null when it has none. */
  body(node: Node): Node | null;
  /** Visibility of a definition; `container` is its enclosing `class` definition, if any. */
  visibility(node: Node, container: Node | null): MemberVisibility;
  /** Text put before the header (e.g. `const ` for an arrow function bound to a const). */
  prefix?(node: Node): string;
  /** Full custom header, when the generic slice does not fit (null = use the generic one). */
  header?(node: Node, source: string): string | null;
  /** Stripped from the end of the collapsed header. */
  trailing: RegExp;
}

const COMMON_NOISE = ['comment', 'line_comment', 'block_comment'];

function set(...items: string[]): ReadonlySet<string> {
  return new Set(items);
}

function span(n: Node): Span {
  return { start: n.startIndex, end: n.endIndex };
}

function directChildren(node: Node): Node[] {
  const out: Node[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (c) out.push(c);
  }
  return out;
}

function fieldBody(node: Node): Node | null {
  return node.childForFieldName('body');
}

const PUBLIC: MemberVisibility = Object.freeze({ marker: '+', remove: [] }) as MemberVisibility;

function markerOfKeyword(word: string): Marker | null {
  switch (word) {
    case 'public':
      return '+';
    case 'private':
      return '-';
    case 'protected':
      return '#';
    case 'internal':
      return '~';
    default:
      return null;
  }
}

/**
 * MemberVisibility from keyword nodes found among `holders` (the definition and its modifier lists).
 * Several keywords combine as the most restrictive shown one (`protected internal` → `#`).
 */
function keywordVisibility(candidates: Node[], fallback: Marker = '+'): MemberVisibility {
  const remove: Span[] = [];
  const seen: Marker[] = [];
  for (const c of candidates) {
    const m = markerOfKeyword(c.text.trim());
    if (m) {
      seen.push(m);
      remove.push(span(c));
    }
  }
  const rank: Record<Marker, number> = { '-': 0, '#': 1, '~': 2, '+': 3 };
  const marker = seen.length ? seen.sort((a, b) => rank[a] - rank[b])[0]! : fallback;
  return { marker, remove };
}

// ── TypeScript / TSX / JavaScript ────────────────────────────────────────────

function jsBody(node: Node): Node | null {
  const own = fieldBody(node);
  if (own) return own;
  // Declarators, class fields and `export default <class|function>` carry the body on their value.
  const value = node.childForFieldName('value');
  return value ? value.childForFieldName('body') : null;
}

function jsVisibility(node: Node): MemberVisibility {
  const remove: Span[] = [];
  let marker: Marker = '+';
  for (const c of directChildren(node)) {
    if (c.type === 'accessibility_modifier') {
      marker = markerOfKeyword(c.text.trim()) ?? '+';
      remove.push(span(c));
    }
  }
  const name = node.childForFieldName('name') ?? node.childForFieldName('property');
  if (name?.type === 'private_property_identifier') marker = '-';
  return { marker, remove };
}

function jsPrefix(node: Node): string {
  // `const f = (…) =>`: the declaration keyword lives on the parent declaration.
  if (node.type !== 'variable_declarator') return '';
  const kw = node.parent?.child(0);
  return kw && !kw.isNamed ? `${kw.text} ` : '';
}

const TS_QUERY = `
(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.class
(export_statement value: (class) @name) @definition.class
(internal_module name: (_) @name) @definition.module
(module name: (_) @name) @definition.module
(enum_declaration name: (_) @name) @definition.type
(type_alias_declaration name: (_) @name) @definition.type
(function_declaration name: (_) @name) @definition.function
(generator_function_declaration name: (_) @name) @definition.function
(function_signature name: (_) @name) @definition.function
(export_statement value: [(function_expression) (arrow_function)] @name) @definition.function
(class_body (method_definition name: (_) @name) @definition.function)
(ERROR (method_definition name: (_) @name) @definition.function)
(class_body (method_signature name: (_) @name) @definition.function)
(abstract_method_signature name: (_) @name) @definition.function
(method_signature name: (_) @name) @definition.function
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function))
(program (variable_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function))
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function))
`;

const JS_QUERY = `
(class_declaration name: (_) @name) @definition.class
(export_statement value: (class) @name) @definition.class
(function_declaration name: (_) @name) @definition.function
(generator_function_declaration name: (_) @name) @definition.function
(export_statement value: [(function_expression) (arrow_function)] @name) @definition.function
(class_body (method_definition name: (_) @name) @definition.function)
(ERROR (method_definition name: (_) @name) @definition.function)
(field_definition property: (_) @name value: [(arrow_function) (function_expression)]) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function))
(program (variable_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function))
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function))
`;

const JS_NOISE = set(...COMMON_NOISE, 'decorator');
const JS_KEYWORDS = set('function');
const JS_TRAILING = /\s*[{;]$/;

function jsSpec(id: LanguageId, grammar: string, extensions: string[], query: string): LanguageSpec {
  return {
    id,
    grammar,
    extensions,
    query,
    noise: JS_NOISE,
    descend: set(),
    memberKeywords: JS_KEYWORDS,
    body: jsBody,
    visibility: jsVisibility,
    prefix: jsPrefix,
    trailing: JS_TRAILING,
  };
}

// ── Python ──────────────────────────────────────────────────────────────────

const PYTHON: LanguageSpec = {
  id: 'python',
  grammar: 'python',
  extensions: ['.py', '.pyi', '.pyw'],
  query: `
(class_definition name: (_) @name) @definition.class
(function_definition name: (_) @name) @definition.function
`,
  noise: set('comment', 'decorator'),
  descend: set(),
  memberKeywords: set('def'),
  body: fieldBody,
  visibility: () => PUBLIC,
  trailing: /\s*:$/,
};

// ── Go ──────────────────────────────────────────────────────────────────────

function goHeader(node: Node, source: string): string | null {
  if (node.type !== 'type_spec' && node.type !== 'type_alias') return null;
  const type = node.childForFieldName('type');
  if (type && (type.type === 'struct_type' || type.type === 'interface_type')) {
    // Show the kind, not the fields: `type Server struct`.
    const head = source.slice(node.startIndex, type.startIndex);
    return `type ${head.trim()} ${type.type === 'struct_type' ? 'struct' : 'interface'}`;
  }
  return `type ${node.text}`;
}

const GO: LanguageSpec = {
  id: 'go',
  grammar: 'go',
  extensions: ['.go'],
  query: `
(type_spec name: (_) @name type: [(struct_type) (interface_type)]) @definition.class
(type_spec name: (_) @name) @definition.type
(type_alias name: (_) @name) @definition.type
(function_declaration name: (_) @name) @definition.function
(method_declaration name: (_) @name) @definition.function
(method_elem name: (_) @name) @definition.function
`,
  noise: set('comment'),
  descend: set(),
  memberKeywords: set('func'),
  body: fieldBody,
  visibility(node) {
    // Go exports by capitalisation; only interface methods are members here.
    const name = node.childForFieldName('name')?.text ?? '';
    return { marker: /^\p{Lu}/u.test(name) ? '+' : '-', remove: [] };
  },
  header: goHeader,
  trailing: /\s*[{;]$/,
};

// ── Rust ────────────────────────────────────────────────────────────────────

const RUST: LanguageSpec = {
  id: 'rust',
  grammar: 'rust',
  extensions: ['.rs'],
  query: `
(struct_item name: (_) @name) @definition.type
(enum_item name: (_) @name) @definition.type
(union_item name: (_) @name) @definition.type
(type_item name: (_) @name) @definition.type
(macro_definition name: (_) @name) @definition.type
(trait_item name: (_) @name) @definition.class
(impl_item type: (_) @name) @definition.class
(mod_item name: (_) @name) @definition.module
(function_item name: (_) @name) @definition.function
(function_signature_item name: (_) @name) @definition.function
`,
  noise: set(...COMMON_NOISE, 'attribute_item', 'inner_attribute_item'),
  descend: set(),
  memberKeywords: set('fn'),
  body(node) {
    // macro_rules! has its rules as direct children, not under a body field.
    if (node.type === 'macro_definition') return node.namedChildren.find((c) => c?.type === 'macro_rule') ?? null;
    return fieldBody(node);
  },
  visibility(node, container) {
    const vis = directChildren(node).find((c) => c.type === 'visibility_modifier');
    if (vis) return { marker: '+', remove: [span(vis)] };
    // Trait items and trait-impl items are as public as the trait itself.
    const publicByTrait = container !== null && (container.type === 'trait_item' || container.childForFieldName('trait') !== null);
    return { marker: publicByTrait ? '+' : '-', remove: [] };
  },
  trailing: /\s*[{;]$/,
};

// ── Java ────────────────────────────────────────────────────────────────────

const JAVA: LanguageSpec = {
  id: 'java',
  grammar: 'java',
  extensions: ['.java'],
  query: `
(class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.class
(enum_declaration name: (_) @name) @definition.class
(record_declaration name: (_) @name) @definition.class
(annotation_type_declaration name: (_) @name) @definition.class
(method_declaration name: (_) @name) @definition.function
(constructor_declaration name: (_) @name) @definition.function
`,
  noise: set(...COMMON_NOISE, 'annotation', 'marker_annotation'),
  descend: set('modifiers'),
  memberKeywords: set(),
  body: fieldBody,
  visibility(node) {
    const mods = directChildren(node).find((c) => c.type === 'modifiers');
    return keywordVisibility(mods ? directChildren(mods) : []);
  },
  trailing: /\s*[{;]$/,
};

// ── C# ──────────────────────────────────────────────────────────────────────

const CSHARP: LanguageSpec = {
  id: 'csharp',
  grammar: 'c-sharp',
  extensions: ['.cs'],
  query: `
(class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.class
(struct_declaration name: (_) @name) @definition.class
(record_declaration name: (_) @name) @definition.class
(enum_declaration name: (_) @name) @definition.type
(delegate_declaration name: (_) @name) @definition.type
(namespace_declaration name: (_) @name) @definition.module
(file_scoped_namespace_declaration name: (_) @name) @definition.module
(method_declaration name: (_) @name) @definition.function
(constructor_declaration name: (_) @name) @definition.function
(destructor_declaration name: (_) @name) @definition.function
`,
  noise: set(...COMMON_NOISE, 'attribute_list'),
  descend: set(),
  memberKeywords: set(),
  body: fieldBody,
  visibility(node) {
    return keywordVisibility(directChildren(node).filter((c) => c.type === 'modifier'));
  },
  trailing: /\s*[{;]$/,
};

// ── C / C++ ─────────────────────────────────────────────────────────────────

function cppVisibility(node: Node, container: Node | null): MemberVisibility {
  if (!container) return PUBLIC;
  // Access is positional: the last `public:`/`private:` label before the member wins.
  let member: Node = node;
  while (member.parent && member.parent.type !== 'field_declaration_list') member = member.parent;
  let marker: Marker = container.type === 'class_specifier' ? '-' : '+';
  for (let s = member.previousSibling; s; s = s.previousSibling) {
    if (s.type === 'access_specifier') {
      marker = markerOfKeyword(s.text.trim()) ?? marker;
      break;
    }
  }
  return { marker, remove: [] };
}

const CPP_FN_DECLARATOR = '[(function_declarator) (pointer_declarator declarator: (function_declarator)) (reference_declarator (function_declarator))]';

const CPP: LanguageSpec = {
  id: 'cpp',
  grammar: 'cpp',
  extensions: ['.c', '.h', '.cc', '.cpp', '.cxx', '.c++', '.hh', '.hpp', '.hxx', '.h++', '.ipp', '.inl'],
  query: `
(namespace_definition name: (_) @name) @definition.module
(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.class
(union_specifier name: (_) @name body: (_)) @definition.class
(enum_specifier name: (_) @name body: (_)) @definition.type
(function_definition declarator: (_) @name) @definition.function
(declaration declarator: ${CPP_FN_DECLARATOR} @name) @definition.function
(field_declaration declarator: ${CPP_FN_DECLARATOR} @name) @definition.function
`,
  noise: set(...COMMON_NOISE, 'field_initializer_list', 'attribute_declaration'),
  descend: set(),
  memberKeywords: set(),
  body: fieldBody,
  visibility: cppVisibility,
  trailing: /\s*[{;]$/,
};

// ── Ruby ────────────────────────────────────────────────────────────────────

function rubyVisibility(node: Node, container: Node | null): MemberVisibility {
  if (!container) return PUBLIC;
  // A bare `private` / `protected` / `public` line switches the default for what follows.
  for (let s = node.previousSibling; s; s = s.previousSibling) {
    if (s.type === 'identifier') {
      const m = markerOfKeyword(s.text);
      if (m) return { marker: m, remove: [] };
    }
  }
  return PUBLIC;
}

const RUBY: LanguageSpec = {
  id: 'ruby',
  grammar: 'ruby',
  extensions: ['.rb', '.rake', '.gemspec'],
  query: `
(module name: (_) @name) @definition.module
(class name: (_) @name) @definition.class
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function
`,
  noise: set('comment'),
  descend: set(),
  memberKeywords: set('def'),
  body: fieldBody,
  visibility: rubyVisibility,
  // Bodiless definitions run up to their `end`; endless methods up to `=`.
  trailing: /(\s*\bend|\s*[;=])$/,
};

// ── PHP ─────────────────────────────────────────────────────────────────────

const PHP: LanguageSpec = {
  id: 'php',
  grammar: 'php',
  extensions: ['.php', '.phtml'],
  query: `
(namespace_definition name: (_) @name) @definition.module
(class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.class
(trait_declaration name: (_) @name) @definition.class
(enum_declaration name: (_) @name) @definition.class
(method_declaration name: (_) @name) @definition.function
(function_definition name: (_) @name) @definition.function
`,
  noise: set('comment', 'attribute_list'),
  descend: set(),
  memberKeywords: set('function'),
  body: fieldBody,
  visibility(node) {
    return keywordVisibility(directChildren(node).filter((c) => c.type === 'visibility_modifier'));
  },
  trailing: /\s*[{;]$/,
};

// ── Bash ────────────────────────────────────────────────────────────────────

const BASH: LanguageSpec = {
  id: 'bash',
  grammar: 'bash',
  extensions: ['.sh', '.bash'],
  query: `(function_definition name: (_) @name) @definition.function`,
  noise: set('comment'),
  descend: set(),
  memberKeywords: set(),
  body: fieldBody,
  visibility: () => PUBLIC,
  trailing: /\s*[{;]$/,
};

/** Every supported language, in a fixed order. */
export const LANGUAGES: readonly LanguageSpec[] = Object.freeze([
  jsSpec('typescript', 'typescript', ['.ts', '.mts', '.cts'], TS_QUERY),
  jsSpec('tsx', 'tsx', ['.tsx'], TS_QUERY),
  jsSpec('javascript', 'javascript', ['.js', '.mjs', '.cjs', '.jsx'], JS_QUERY),
  PYTHON,
  GO,
  RUST,
  JAVA,
  CSHARP,
  CPP,
  RUBY,
  PHP,
  BASH,
]);

const BY_ID = new Map<LanguageId, LanguageSpec>(LANGUAGES.map((l) => [l.id, l]));
const BY_EXT = new Map<string, LanguageSpec>(LANGUAGES.flatMap((l) => l.extensions.map((e) => [e, l] as const)));

/** Every supported language id, in a fixed order. */
export const SUPPORTED_LANGUAGES: readonly LanguageId[] = Object.freeze(LANGUAGES.map((l) => l.id));

/** The spec of a language id. */
export function languageSpec(id: LanguageId): LanguageSpec {
  const spec = BY_ID.get(id);
  if (!spec) throw new RangeError(`unknown outline language: ${id}`);
  return spec;
}

/**
 * Base name of a path or URI: the text after the last `/` (or `\`), query and fragment removed.
 * `viking://resources/app/src/server.ts#p3` → `server.ts`.
 */
export function baseName(filename: string): string {
  const clean = filename.replace(/[?#].*$/, '').replace(/[/\\]+$/, '');
  const cut = Math.max(clean.lastIndexOf('/'), clean.lastIndexOf('\\'));
  return cut >= 0 ? clean.slice(cut + 1) : clean;
}

/**
 * Language of a file by its extension (case-insensitive), or null for anything else —
 * markdown, text, config and data files (`.md .txt .json .yaml .toml .csv .html .css` …) included.
 */
export function languageForFile(filename: string): LanguageId | null {
  const name = baseName(filename).toLowerCase();
  const dot = name.lastIndexOf('.');
  // A leading dot alone (`.bashrc`) is a hidden file, not an extension.
  if (dot <= 0) return null;
  return BY_EXT.get(name.slice(dot))?.id ?? null;
}
