import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import * as bundled from '@vscode/tree-sitter-wasm';
import type { Parser, Query } from '@vscode/tree-sitter-wasm';
import { SUPPORTED_LANGUAGES, languageForFile, languageSpec, type LanguageId, type LanguageSpec } from './languages';
import { renderOutline, type RenderLimits } from './render';

/** The function the kernel injects: `(filename, source) → outline` ("" when there is none). */
export type OutlineFn = (filename: string, source: string) => string;

/** An outliner that never outlines (the kernel's default when no parser is available). */
export const NO_OUTLINE: OutlineFn = () => '';

/** Options of {@link createOutliner}. */
export interface OutlinerOptions {
  /**
   * Grammars loaded before `createOutliner` resolves. Languages left out are loaded lazily:
   * the first `outline()` of such a file returns "" and starts loading its grammar in the
   * background; `prepare()` awaits it.
   * @default 'all'
   */
  languages?: readonly LanguageId[] | 'all';
  /** Source characters parsed at most; a longer file is outlined from its prefix. @default 128000 */
  maxSourceChars?: number;
  /** Definition lines per outline at most. @default 400 */
  maxDefinitions?: number;
  /** Characters per definition line at most. @default 160 */
  maxLineChars?: number;
  /** Outlines remembered, keyed by file name and a hash of the source (0 disables). @default 256 */
  cacheSize?: number;
}

/** A loaded outliner. */
export interface Outliner {
  /**
   * Outline of a code file, synchronously: `# <basename> [aider-repomap-lite, compact]` then one
   * line per definition (see the package documentation for the line shapes). Returns "" for
   * files that are not code, for languages whose grammar is not loaded yet, for sources with no
   * definition, and on any internal failure — it never throws.
   */
  readonly outline: OutlineFn;
  /** Language of a file name, or null when it is not a supported code file. */
  languageOf(filename: string): LanguageId | null;
  /**
   * Load the grammar of a file name's (or language id's) language, if needed.
   * @returns true when `outline()` can now handle it, false for unsupported names
   */
  prepare(filenameOrLanguage: string): Promise<boolean>;
  /** Languages whose grammar is loaded, in {@link SUPPORTED_LANGUAGES} order. */
  loadedLanguages(): LanguageId[];
}

/** Raised by {@link createOutliner} when the tree-sitter runtime or a requested grammar cannot load. */
export class OutlinerInitError extends Error {
  /** Languages that failed (empty when the runtime itself failed). */
  readonly languages: LanguageId[];

  constructor(message: string, languages: LanguageId[], options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutlinerInitError';
    this.languages = languages;
  }
}

interface Loaded {
  spec: LanguageSpec;
  parser: Parser;
  query: Query;
}

type TreeSitter = typeof bundled;

const RUNTIME_FILE = require.resolve('@vscode/tree-sitter-wasm');
const WASM_DIR = path.dirname(RUNTIME_FILE);
const locateFile = (file: string): string => path.join(WASM_DIR, file);

// The runtime and the grammars are process-wide: every outliner shares one copy of each.
let runtime: Promise<TreeSitter> | null = null;
const pending = new Map<LanguageId, Promise<Loaded>>();
const loaded = new Map<LanguageId, Loaded>();

function isMissingDynamicImport(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  return (
    (typeof err?.code === 'string' && err.code.startsWith('ERR_VM_DYNAMIC_IMPORT')) ||
    (typeof err?.message === 'string' && /dynamic import/i.test(err.message))
  );
}

/**
 * A private copy of the runtime compiled in the main context with Node's default loader.
 * Needed where this module itself runs inside a `vm` context without a dynamic-import hook
 * (jest without `--experimental-vm-modules`): the runtime's init does `await import('module')`.
 */
function compileInMainContext(): TreeSitter {
  const source = readFileSync(RUNTIME_FILE, 'utf8');
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: RUNTIME_FILE,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const factory = script.runInThisContext() as (e: object, r: NodeJS.Require, m: { exports: object }, f: string, d: string) => void;
  const mod = { exports: {} };
  factory(mod.exports, require, mod, RUNTIME_FILE, WASM_DIR);
  return mod.exports as TreeSitter;
}

function loadRuntime(): Promise<TreeSitter> {
  runtime ??= (async () => {
    try {
      await bundled.Parser.init({ locateFile });
      return bundled;
    } catch (e) {
      if (!isMissingDynamicImport(e)) throw e;
      const copy = compileInMainContext();
      await copy.Parser.init({ locateFile });
      return copy;
    }
  })().catch((e: unknown) => {
    runtime = null; // let a later call retry
    throw e;
  });
  return runtime;
}

function loadLanguage(id: LanguageId): Promise<Loaded> {
  let p = pending.get(id);
  if (!p) {
    const spec = languageSpec(id);
    p = (async () => {
      const ts = await loadRuntime();
      const language = await ts.Language.load(locateFile(`tree-sitter-${spec.grammar}.wasm`));
      const parser = new ts.Parser();
      parser.setLanguage(language);
      const query = new ts.Query(language, spec.query);
      const entry: Loaded = { spec, parser, query };
      loaded.set(id, entry);
      return entry;
    })();
    p.catch(() => pending.delete(id)); // a failed load may be retried
    pending.set(id, p);
  }
  return p;
}

function resolveLanguage(filenameOrLanguage: string): LanguageId | null {
  if ((SUPPORTED_LANGUAGES as readonly string[]).includes(filenameOrLanguage)) return filenameOrLanguage as LanguageId;
  return languageForFile(filenameOrLanguage);
}

/**
 * Create an outliner: loads the tree-sitter runtime (once per process) and the requested
 * grammars (each once per process, shared), then returns an object whose `outline` is
 * synchronous and safe for the hot path.
 * @throws OutlinerInitError when the runtime or a requested grammar cannot be loaded
 */
export async function createOutliner(options: OutlinerOptions = {}): Promise<Outliner> {
  const limits: RenderLimits = {
    maxDefinitions: options.maxDefinitions ?? 400,
    maxLineChars: options.maxLineChars ?? 160,
  };
  const maxSourceChars = options.maxSourceChars ?? 128_000;
  const cacheSize = options.cacheSize ?? 256;
  const wanted = options.languages === undefined || options.languages === 'all' ? SUPPORTED_LANGUAGES : options.languages;

  try {
    await loadRuntime();
  } catch (e) {
    throw new OutlinerInitError(`tree-sitter runtime failed to load: ${(e as Error).message}`, [], { cause: e });
  }
  const results = await Promise.allSettled(wanted.map((id) => loadLanguage(id)));
  const failed = wanted.filter((_, i) => results[i]!.status === 'rejected');
  if (failed.length > 0) {
    const first = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    throw new OutlinerInitError(`grammars failed to load: ${failed.join(', ')}`, failed, { cause: first.reason });
  }

  // Insertion-ordered Map as an LRU: re-inserted on hit, oldest evicted first.
  const cache = new Map<string, string>();

  const outline: OutlineFn = (filename, source) => {
    try {
      if (typeof filename !== 'string' || typeof source !== 'string') return '';
      const id = languageForFile(filename);
      if (!id) return '';
      const entry = loaded.get(id);
      if (!entry) {
        // Not loaded yet: answer now, load for next time.
        loadLanguage(id).catch(() => undefined);
        return '';
      }
      const text = source.length > maxSourceChars ? source.slice(0, maxSourceChars) : source;
      let key = '';
      if (cacheSize > 0) {
        key = `${id}\u0000${filename}\u0000${createHash('sha1').update(text).digest('base64')}`;
        const hit = cache.get(key);
        if (hit !== undefined) {
          cache.delete(key);
          cache.set(key, hit);
          return hit;
        }
      }
      const result = outlineWith(entry, filename, text, limits);
      if (cacheSize > 0) {
        cache.set(key, result);
        if (cache.size > cacheSize) cache.delete(cache.keys().next().value!);
      }
      return result;
    } catch {
      return '';
    }
  };

  return {
    outline,
    languageOf: (filename) => languageForFile(filename),
    async prepare(filenameOrLanguage) {
      const id = resolveLanguage(filenameOrLanguage);
      if (!id) return false;
      await loadLanguage(id);
      return true;
    },
    loadedLanguages: () => SUPPORTED_LANGUAGES.filter((id) => loaded.has(id)),
  };
}

function outlineWith(entry: Loaded, filename: string, source: string, limits: RenderLimits): string {
  entry.parser.reset();
  const tree = entry.parser.parse(source);
  if (!tree) return '';
  try {
    return renderOutline(entry.spec, entry.query, tree.rootNode, source, filename, limits);
  } finally {
    // Trees live in wasm memory: free them or the heap grows with every call.
    tree.delete();
  }
}

/**
 * The outliner's `outline`, or null when tree-sitter cannot load: the outliner is an optional
 * quality feature (code files then get the generic document overview, context-contract §4.4
 * rules 3–4), never a reason to refuse to start. `onFailure` hears why (log it).
 */
export async function loadOutline(
  onFailure: (err: unknown) => void = () => undefined,
  options: OutlinerOptions = {},
): Promise<Outliner['outline'] | null> {
  try {
    return (await createOutliner(options)).outline;
  } catch (err) {
    onFailure(err);
    return null;
  }
}
