/**
 * The `docs` corpus profile (issue 13, item 1): a tree shaped like a real user's, where the
 * default profile is mostly short memories. Per 100 documents: 60 memories with `# Summary`
 * sections, 30 markdown resources of 200–3,000 words (headings, lists, code fences), 10
 * TypeScript or Python files; one prose document in three is Chinese. Words are drawn
 * head-heavy (Zipf) from one fixed vocabulary per language, so a few terms are in most rows and
 * most terms are rare, as in real text.
 *
 * Queries are 2–4 consecutive words of a random document (no keywords picked by hand), each used
 * once, so a query can match many rows and the lexical leg sees the long postings lists a real
 * corpus has. Like the default profile, document `i` depends only on (seed, i), never on the
 * corpus size: one index grows from one size to the next.
 */
import type { BenchQuery, CorpusDoc, Lang } from './corpus';
import { Rng, hashSeed } from './rng';
import { EN_ADJ, EN_COMMON, EN_NAMES, EN_VERBS, TAIL, TOOLS, TOPICS, ZH_ADJ, ZH_COMMON, ZH_NAMES, ZH_VERBS } from './vocab';

/** Default seed of the `docs` profile (another corpus than the default profile's). */
export const DOCS_SEED = 20261301;

/** Share of each kind of document. */
export const DOCS_KIND_WEIGHTS = Object.freeze({ memory: 60, resource: 30, code: 10 });

/** Chance that a prose document (memory or resource) is Chinese: a third of all documents. */
const ZH_SHARE = 1 / 3 / 0.9;

/** Characters the generated Chinese words are made of (two or three of them per word). */
const ZH_CHARS = [...'的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严龙飞'];

function zhWords(): string[] {
  const out: string[] = [];
  const n = ZH_CHARS.length;
  // Deterministic two- and three-character words over a fixed alphabet: a vocabulary of ~12k.
  for (let i = 0; out.length < 12_000; i++) {
    const a = ZH_CHARS[(i * 7) % n]!;
    const b = ZH_CHARS[(i * 13 + 5) % n]!;
    out.push(i % 5 === 4 ? a + b + ZH_CHARS[(i * 31 + 11) % n]! : a + b);
  }
  return [...new Set(out)];
}

/**
 * The vocabularies, most frequent first: function words and topic words at the head (the
 * terms in most rows), then names and tools, then the long generated tail.
 */
const EN_VOCAB: readonly string[] = [
  ...new Set([
    ...EN_COMMON,
    'and',
    'of',
    'to',
    'in',
    'is',
    'we',
    'it',
    'this',
    'that',
    'on',
    ...EN_VERBS,
    ...EN_ADJ,
    ...TOPICS.flatMap((t) => t.en),
    ...EN_NAMES.map((n) => n.toLowerCase()),
    ...TOOLS.map((t) => t.toLowerCase()),
    ...TAIL,
  ]),
];
const ZH_VOCAB: readonly string[] = [...new Set([...ZH_COMMON, ...ZH_VERBS, ...ZH_ADJ, ...TOPICS.flatMap((t) => t.zh), ...ZH_NAMES, ...zhWords()])];

/** Options of the `docs` generator. */
export interface DocsCorpusOptions {
  /** Seed of the whole corpus. @default DOCS_SEED */
  seed?: number;
  /** The user whose tree this is. @default "default" */
  user?: string;
}

/** One generated document with its sentences as word lists (queries are cut from them). */
export interface DocsDoc extends CorpusDoc {
  /** The prose sentences, as the words they were written from. */
  sentences: string[][];
}

class Writer {
  readonly sentences: string[][] = [];
  constructor(
    readonly rng: Rng,
    readonly lang: Lang,
  ) {}

  word(): string {
    const v = this.lang === 'en' ? EN_VOCAB : ZH_VOCAB;
    return v[this.rng.zipfIndex(v.length)]!;
  }

  /** A sentence of `n` words (recorded for the query set). */
  sentence(n = this.rng.int(6, 16)): string {
    const ws = Array.from({ length: n }, () => this.word());
    this.sentences.push(ws);
    if (this.lang === 'zh') return ws.join('') + '。';
    const s = ws.join(' ');
    return s.charAt(0).toUpperCase() + s.slice(1) + '.';
  }

  /** Sentences until about `words` words. */
  prose(words: number): string {
    const out: string[] = [];
    let n = 0;
    while (n < words) {
      const len = this.rng.int(6, 16);
      out.push(this.sentence(len));
      n += len;
    }
    return out.join(this.lang === 'zh' ? '' : ' ');
  }

  heading(): string {
    const n = this.rng.int(2, 4);
    const ws = Array.from({ length: n }, () => this.word());
    return this.lang === 'zh' ? ws.join('') : ws.join(' ');
  }
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** A markdown resource of about `words` words: headings, paragraphs, a list, a code fence. */
function resourceBody(w: Writer, words: number): string {
  const r = w.rng;
  const parts = [`# ${w.heading()}`, w.prose(Math.min(words, r.int(40, 90)))];
  let n = 60;
  while (n < words) {
    parts.push(`## ${w.heading()}`);
    const para = r.int(60, 180);
    parts.push(w.prose(para));
    n += para;
    if (r.chance(0.35)) {
      const items = r.int(2, 5);
      parts.push(Array.from({ length: items }, () => `- ${w.sentence(r.int(4, 9))}`).join('\n'));
      n += items * 6;
    }
    if (r.chance(0.2)) {
      const cmd = EN_VOCAB[r.zipfIndex(EN_VOCAB.length)]!;
      parts.push('```sh\n' + `npm run ${cmd} -- --${EN_VOCAB[r.zipfIndex(EN_VOCAB.length)]!}=${r.int(1, 99)}\n` + '```');
      n += 6;
    }
  }
  return parts.join('\n\n');
}

function memoryBody(w: Writer, date: string): string {
  const r = w.rng;
  return `# Summary\n${w.prose(r.int(12, 40))}\n\n# ${date} ChatLog:\n${w.prose(r.int(30, 140))}`;
}

function ident(words: string[]): string {
  return words.map((x, i) => (i === 0 ? x : x.charAt(0).toUpperCase() + x.slice(1))).join('').replace(/[^A-Za-z0-9]/g, '') || 'x';
}

function codeBody(w: Writer, ext: 'ts' | 'py'): string {
  const r = w.rng;
  const fns = r.int(3, 10);
  const lines: string[] = [];
  const cls = ident([w.word(), w.word()]);
  const Cls = cls.charAt(0).toUpperCase() + cls.slice(1);
  if (ext === 'ts') {
    lines.push(`import { ${ident([w.word()])} } from './${w.word()}';`, '', `/** ${w.sentence()} */`, `export class ${Cls} {`);
    for (let f = 0; f < fns; f++) {
      const fn = ident([w.word(), w.word()]);
      const arg = ident([w.word()]);
      lines.push(`  /** ${w.sentence()} */`, `  ${fn}(${arg}: string, limit = ${r.int(1, 64)}): boolean {`, `    return ${arg}.length < limit;`, '  }', '');
    }
    lines.push('}');
  } else {
    lines.push(`"""${w.sentence()}"""`, '', '', `class ${Cls}:`);
    for (let f = 0; f < fns; f++) {
      const fn = [w.word(), w.word()].join('_').replace(/[^a-z0-9_]/g, '');
      lines.push(`    def ${fn || 'f'}(self, value: str, limit: int = ${r.int(1, 64)}) -> bool:`, `        """${w.sentence()}"""`, '        return len(value) < limit', '');
    }
  }
  return lines.join('\n');
}

/**
 * Document `index` of the `docs` corpus. Pure and independent of the corpus size.
 * @throws RangeError for a negative or fractional index
 */
export function docsDocAt(index: number, opts: DocsCorpusOptions = {}): DocsDoc {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`index must be a non-negative integer, got ${index}`);
  const seed = opts.seed ?? DOCS_SEED;
  const user = opts.user ?? 'default';
  const rng = new Rng(hashSeed(seed, index));
  const kind = rng.weighted(DOCS_KIND_WEIGHTS);
  const lang: Lang = kind !== 'code' && rng.chance(ZH_SHARE) ? 'zh' : 'en';
  const w = new Writer(rng, lang);
  const project = `proj-${pad(index % 97, 2)}`;
  let uri: string;
  let content: string;
  if (kind === 'memory') {
    const date = `2026-${pad(rng.int(1, 12), 2)}-${pad(rng.int(1, 28), 2)}`;
    const cat = rng.pick(['events', 'entities', 'preferences', 'experiences']);
    uri = `viking://user/${user}/memories/${cat}/${date.slice(0, 7)}/m-${pad(index, 7)}.md`;
    content = memoryBody(w, date);
  } else if (kind === 'resource') {
    const words = rng.int(200, 3_000);
    uri = `viking://resources/${project}/docs/${pad(Math.floor(index / 50), 5)}/page-${pad(index, 7)}.md`;
    content = resourceBody(w, words);
  } else {
    const ext = rng.chance(0.5) ? 'ts' : 'py';
    uri = `viking://resources/${project}/src/${pad(Math.floor(index / 50), 5)}/mod_${pad(index, 7)}.${ext}`;
    content = codeBody(w, ext);
  }
  return { index, uri, content, kind, lang, topic: 'docs', nodeUri: uri, keywords: [], sentences: w.sentences };
}

/** Documents `from` (inclusive) to `to` (exclusive) of the `docs` corpus, lazily. */
export function* docsDocs(from: number, to: number, opts: DocsCorpusOptions = {}): Generator<DocsDoc> {
  for (let i = from; i < to; i++) yield docsDocAt(i, opts);
}

/**
 * The `docs` query set: `count` queries, each 2–4 consecutive words of one sentence of a random
 * document among the first `pool`, in that document's language, each text used once (a repeat
 * is drawn again). Deterministic.
 * @throws RangeError when the pool is empty
 */
export function buildDocsQueries(count: number, opts: DocsCorpusOptions & { pool: number }): BenchQuery[] {
  if (!(opts.pool >= 1)) throw new RangeError(`pool must be ≥ 1, got ${opts.pool}`);
  const seed = opts.seed ?? DOCS_SEED;
  const out: BenchQuery[] = [];
  const seen = new Set<string>();
  for (let attempt = 0; out.length < count && attempt < count * 20; attempt++) {
    const r = new Rng(hashSeed(seed, 'query', attempt));
    const d = docsDocAt(r.int(0, opts.pool - 1), opts);
    const sentences = d.sentences.filter((s) => s.length >= 4);
    if (sentences.length === 0) continue;
    const s = r.pick(sentences);
    const n = r.int(2, 4);
    const at = r.int(0, s.length - n);
    const words = s.slice(at, at + n);
    const text = d.lang === 'zh' ? words.join('') : words.join(' ');
    if (seen.has(text)) continue;
    seen.add(text);
    out.push({ id: out.length, text, lang: d.lang, target: d.nodeUri, targetKind: d.kind, targetIndex: d.index });
  }
  return out;
}
