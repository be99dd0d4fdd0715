/**
 * `@ctxmesh/outline` — the structural skeleton of a code file, used as its overview tier
 * (context-contract §4.4 item 2, §11.1 item 2). Built with tree-sitter tag queries
 * (`web-tree-sitter` and the grammars shipped by `@vscode/tree-sitter-wasm`), never regexes.
 *
 * ```ts
 * const outliner = await createOutliner();            // runtime + every grammar, once per process
 * const text = outliner.outline('src/server.ts', src); // synchronous; "" when there is nothing
 * kernel({ outline: outliner.outline });               // the injected (filename, source) => string
 * ```
 *
 * ## Output
 *
 * ```
 * # <basename> [aider-repomap-lite, compact]
 * <definition line>
 * ...
 * # … N more definitions            (only when maxDefinitions was reached)
 * ```
 *
 * One line per definition, in source order. A definition line is the definition's own source
 * from its start up to its body — name, type parameters, parameters, return type, heritage —
 * with comments, decorators/annotations/attributes and visibility keywords removed, whitespace
 * collapsed to single spaces (`( a, b, )` → `(a, b)`), and the trailing `{`, `;`, `:` (Python)
 * or `end`/`=` (Ruby) dropped; at most `maxLineChars` characters (then `…`).
 *
 * - **Containers** (class, interface, struct/interface in Go, trait and impl in Rust, enum in
 *   Java/PHP, record…) list their methods and nested types one indent level (two spaces) deeper.
 *   These members start with a visibility marker: `+` public or the language's default, `-`
 *   private, `#` protected, `~` internal (C#). Members also lose the function keyword
 *   (`def`, `fn`, `function`, `func`): `  + bar(x: number): string`, `  + size(self) -> int`.
 *   Marker sources: TS/JS `private`/`protected`/`#name`; Java, C#, PHP modifiers; C++ the last
 *   access label (class default private, struct public); Rust `pub` (trait items and
 *   trait-impl items are public, other impl items private); Go capitalisation; Ruby a bare
 *   `private`/`protected` line; Python and Bash always `+`.
 * - **Scopes** (TS namespace/module, Rust `mod`, C# and C++ namespaces, Ruby `module`, PHP
 *   braced namespaces) indent what they hold without making it a member: lines keep their keyword.
 * - **Functions** at top level keep their keyword: `def f(a, b)`, `function top<T>(a: number): string`,
 *   `func (s *Server) Start(ctx context.Context) error` (Go methods stay top-level, with their
 *   receiver), `fn main()`. Top-level `const f = (x) =>` arrow/function expressions are listed
 *   as `const f = (x: number): T =>`; class fields holding one as `  + handler = (e: Event): void =>`.
 * - **Leaf types** are one line, their body left out: `enum Color`, `struct Point<T>`,
 *   `type Server struct`, and aliases in full: `type Alias<T> = T | null`, `type ID int`.
 * - Definitions inside a function body (nested functions, local classes) are left out.
 *
 * Languages and extensions: TypeScript (`.ts .mts .cts`), TSX (`.tsx`), JavaScript
 * (`.js .mjs .cjs .jsx`), Python (`.py .pyi .pyw`), Go, Rust, Java, C# (`.cs`), C/C++
 * (`.c .h .cc .cpp .cxx .hh .hpp …`), Ruby (`.rb .rake .gemspec`), PHP, Bash (`.sh .bash`).
 * Everything else — markdown, text, config and data files — has no outline ("").
 *
 * Robustness: a file with syntax errors yields what the parser could recover; sources longer
 * than `maxSourceChars` are outlined from their prefix; `outline` never throws.
 */
export * from './languages';
export * from './outliner';
export { renderOutline, tidy, clip, type RenderLimits, type DefinitionKind } from './render';
