/**
 * The deterministic synthetic corpus (issue 8, item 1): N nodes with the mix a real user's
 * tree has — memories of every category with `# Summary` sections (English and Chinese),
 * peers' and other users' memories, markdown resources (some long enough to be chunked into
 * passages), code files, skills, and directories with `.abstract.md` / `.overview.md`
 * sidecars — plus a query set whose every query names a known target document.
 *
 * Document `i` depends only on (seed, i), never on N: the 1k corpus is a prefix of the 10k
 * corpus, which is a prefix of the 100k one, so the same queries stay valid at every size
 * and a bench can grow one index instead of rebuilding it.
 */
import { Rng, hashSeed } from './rng';
import { EN_ADJ, EN_COMMON, EN_NAMES, EN_VERBS, TAIL, TOOLS, TOPICS, ZH_ADJ, ZH_COMMON, ZH_NAMES, ZH_VERBS, type Topic } from './vocab';

/** What a document is. */
export type DocKind =
  | 'memory'
  | 'peer-memory'
  | 'other-memory'
  | 'resource'
  | 'long-resource'
  | 'code'
  | 'skill'
  | 'dir-abstract'
  | 'dir-overview';

/** Language of a document's prose. */
export type Lang = 'en' | 'zh';

/** One file of the corpus, as written through `/api/v1/content/write` or the indexer. */
export interface CorpusDoc {
  /** Position in the corpus (0-based). */
  index: number;
  /** URI written. */
  uri: string;
  /** File content. */
  content: string;
  /** Kind of file. */
  kind: DocKind;
  /** Language of its prose (code is `en`). */
  lang: Lang;
  /** Topic slug. */
  topic: string;
  /** URI a search returns for it: the file, or the directory for a sidecar. */
  nodeUri: string;
  /** Distinctive words of the document (for building known-item queries). */
  keywords: string[];
}

/** A query of the query set. */
export interface BenchQuery {
  /** Position in the query set. */
  id: number;
  /** Query text. */
  text: string;
  /** Language of the query. */
  lang: Lang;
  /** Node URI of the document the query was written from. */
  target: string;
  /** Kind of the target document. */
  targetKind: DocKind;
  /** Corpus index of the target document. */
  targetIndex: number;
}

/** Options of the generator. */
export interface CorpusOptions {
  /** Seed of the whole corpus. @default 20260801 */
  seed?: number;
  /** The user whose tree this is (the bench calls as this user). @default "default" */
  user?: string;
  /** Files per resource directory (each directory gets both sidecars). @default 64 */
  dirSize?: number;
}

/** Default corpus seed. */
export const DEFAULT_SEED = 20260801;

/** The share of each kind among the non-sidecar documents (sidecars are 2 per directory). */
export const KIND_WEIGHTS: Readonly<Record<Exclude<DocKind, 'dir-abstract' | 'dir-overview'>, number>> = Object.freeze({
  memory: 40,
  'peer-memory': 5,
  'other-memory': 5,
  resource: 25,
  'long-resource': 4,
  code: 15,
  skill: 3,
});

const MEMORY_CATEGORIES = ['events', 'entities', 'preferences', 'experiences'] as const;
const PEERS = ['peer-a', 'peer-b', 'peer-c'];
const PROJECTS = 40;
/** Topics that make sense for resources, code and skills (engineering). */
const WORK_TOPICS = TOPICS.slice(0, 12);

interface Resolved {
  seed: number;
  user: string;
  dirSize: number;
}

function resolve(opts: CorpusOptions): Resolved {
  const dirSize = opts.dirSize ?? 64;
  if (!Number.isInteger(dirSize) || dirSize < 4) throw new RangeError(`dirSize must be an integer ≥ 4, got ${dirSize}`);
  return { seed: opts.seed ?? DEFAULT_SEED, user: opts.user ?? 'default', dirSize };
}

/** Words drawn while writing one document; the rare ones become its keywords. */
class Writer {
  readonly rare = new Set<string>();
  readonly used = new Set<string>();

  constructor(
    readonly rng: Rng,
    readonly topic: Topic,
  ) {}

  private topicWord(lang: Lang): string {
    const w = this.rng.pick(lang === 'en' ? this.topic.en : this.topic.zh);
    this.used.add(w);
    return w;
  }

  private tail(): string {
    const rank = this.rng.zipfIndex(TAIL.length);
    const w = TAIL[rank]!;
    // Only genuinely rare words identify a document.
    if (rank > 200) this.rare.add(w);
    return w;
  }

  /** One English sentence. */
  en(): string {
    const r = this.rng;
    const name = r.pick(EN_NAMES);
    const a = this.topicWord('en');
    const b = this.topicWord('en');
    const c = this.topicWord('en');
    const t = this.tail();
    switch (r.int(0, 4)) {
      case 0:
        return `${name} ${r.pick(EN_VERBS)} the ${a} ${b} for the ${t} ${c} ${r.pick(EN_COMMON)}.`;
      case 1:
        return `We ${r.pick(EN_VERBS)} ${r.pick(TOOLS)} ${a} settings after the ${b} ${t} was ${r.pick(EN_ADJ)}.`;
      case 2:
        return `The ${a} ${b} looked ${r.pick(EN_ADJ)} ${r.pick(EN_COMMON)} ${r.pick(EN_COMMON)}, so ${name} checked the ${t} ${c}.`;
      case 3:
        return `Next ${r.pick(EN_COMMON)} the ${r.pick(EN_COMMON)} will review ${a} and ${b} with ${name} before the ${t} ${c} ships.`;
      default:
        return `${name} noted that ${a} ${t} needs a ${r.pick(EN_ADJ)} ${b} and a ${c} plan.`;
    }
  }

  /** One Chinese sentence. */
  zh(): string {
    const r = this.rng;
    const name = r.pick(ZH_NAMES);
    const a = this.topicWord('zh');
    const b = this.topicWord('zh');
    const c = this.topicWord('zh');
    switch (r.int(0, 3)) {
      case 0:
        return `${name}${r.pick(ZH_COMMON)}${r.pick(ZH_VERBS)}了${a}的${b}，因为${this.tail()}的${c}${r.pick(ZH_ADJ)}。`;
      case 1:
        return `${r.pick(ZH_COMMON)}${r.pick(ZH_VERBS)}${r.pick(TOOLS)}的${a}配置，${b}和${c}都${r.pick(ZH_ADJ)}。`;
      case 2:
        return `${name}觉得${a}和${b}${r.pick(ZH_ADJ)}，${r.pick(ZH_COMMON)}要${r.pick(ZH_VERBS)}${c}。`;
      default:
        return `关于${a}${b}，${name}和${r.pick(ZH_NAMES)}${r.pick(ZH_VERBS)}了${this.tail()}项目${c}的细节。`;
    }
  }

  sentence(lang: Lang): string {
    return lang === 'en' ? this.en() : this.zh();
  }

  paragraph(lang: Lang, sentences: number): string {
    return Array.from({ length: sentences }, () => this.sentence(lang)).join(lang === 'en' ? ' ' : '');
  }

  title(lang: Lang): string {
    const a = this.topicWord(lang);
    const b = this.topicWord(lang);
    return lang === 'en' ? `${cap(a)} ${b} ${this.tail()}` : `${a}${b}说明`;
  }

  keywords(lang: Lang): string[] {
    const rare = [...this.rare];
    const topical = [...this.used].filter((w) => (lang === 'en' ? /^[a-z]/.test(w) : !/^[a-z]/i.test(w)));
    return [...rare.slice(0, 2), ...topical.slice(0, 3)];
  }
}

function cap(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

function pascal(...words: string[]): string {
  return words.map((w) => cap(w.replace(/[^a-z0-9]/gi, ''))).join('');
}

function camel(...words: string[]): string {
  const p = pascal(...words);
  return p.charAt(0).toLowerCase() + p.slice(1);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** The resource directory of bucket `b` (both sidecars and the files of that bucket live there). */
function bucketDir(b: number, seed: number): { dir: string; topic: Topic; project: string } {
  const topic = WORK_TOPICS[hashSeed(seed, 'dir', b) % WORK_TOPICS.length]!;
  const project = `proj-${pad(b % PROJECTS, 2)}`;
  return { dir: `viking://resources/${project}/docs/${topic.slug}-${pad(b, 5)}`, topic, project };
}

function memoryBody(w: Writer, lang: Lang, category: (typeof MEMORY_CATEGORIES)[number], date: string): string {
  const r = w.rng;
  const withSummary = r.chance(0.8);
  const fields = r.chance(0.5) ? `\n\n<!-- MEMORY_FIELDS {"category":"${category}","source":"bench"} -->` : '';
  if (!withSummary) return w.paragraph(lang, r.int(1, 3)) + fields;
  const summary = w.paragraph(lang, r.int(1, 2));
  switch (category) {
    case 'events':
      return `# Summary\n${summary}\n\n# ${date} ChatLog:\n${w.paragraph(lang, r.int(3, 6))}${fields}`;
    case 'entities':
      return `# Summary\n${summary}\n\n## Details\n${w.paragraph(lang, r.int(2, 3))}${fields}`;
    case 'preferences':
      return `# Summary\n${summary}\n\n${w.paragraph(lang, r.int(1, 2))}${fields}`;
    default:
      return `# Summary\n${summary}\n\n## Lesson\n${w.paragraph(lang, r.int(2, 3))}${fields}`;
  }
}

function markdown(w: Writer, lang: Lang, sections: number, paragraphs: [number, number], sentences: [number, number]): string {
  const r = w.rng;
  const parts = [`# ${w.title(lang)}`, w.paragraph(lang, r.int(2, 3))];
  for (let s = 0; s < sections; s++) {
    parts.push(`## ${w.title(lang)}`);
    const n = r.int(paragraphs[0], paragraphs[1]);
    for (let p = 0; p < n; p++) parts.push(w.paragraph(lang, r.int(sentences[0], sentences[1])));
  }
  return parts.join('\n\n');
}

function codeFile(w: Writer, ext: 'ts' | 'py' | 'go'): string {
  const r = w.rng;
  const a = r.pick(w.topic.en);
  const b = r.pick(w.topic.en);
  const rank = r.zipfIndex(TAIL.length);
  const tail = TAIL[rank]!;
  w.used.add(a);
  w.used.add(b);
  if (rank > 200) w.rare.add(tail);
  const fns = r.int(2, 6);
  const lines: string[] = [];
  if (ext === 'ts') {
    lines.push(`import { ${pascal(r.pick(TOOLS))}Client } from './${a}-client';`, '');
    lines.push(`/** Options of the ${a} ${b} ${tail} handler. */`, `export interface ${pascal(a, b)}Options {`, `  ${camel(a)}Limit: number;`, `  ${camel(b)}TimeoutMs: number;`, '}', '');
    lines.push(`export class ${pascal(a, b, tail)} {`, `  constructor(private readonly opts: ${pascal(a, b)}Options) {}`, '');
    for (let f = 0; f < fns; f++) {
      const v = r.pick(EN_VERBS).replace(/ed$/, '');
      const c = r.pick(w.topic.en);
      lines.push(`  /** ${w.en()} */`, `  ${camel(v, c)}(${camel(c)}: string, count = ${r.int(1, 64)}): boolean {`, `    if (count > this.opts.${camel(a)}Limit) return false;`, `    return ${camel(c)}.length < this.opts.${camel(b)}TimeoutMs;`, '  }', '');
    }
    lines.push('}');
  } else if (ext === 'py') {
    lines.push(`"""${w.en()}"""`, 'from dataclasses import dataclass', '', '', '@dataclass', `class ${pascal(a, b)}Config:`, `    ${a}_limit: int = ${r.int(1, 100)}`, `    ${b}_${tail}: str = "${r.pick(TOOLS)}"`, '', '');
    for (let f = 0; f < fns; f++) {
      const v = r.pick(EN_VERBS).replace(/ed$/, '');
      const c = r.pick(w.topic.en);
      lines.push(`def ${v}_${c}(${c}: str, config: ${pascal(a, b)}Config) -> bool:`, `    """${w.en()}"""`, `    if len(${c}) > config.${a}_limit:`, '        return False', `    return config.${b}_${tail} in ${c}`, '', '');
    }
  } else {
    lines.push(`// Package ${a} ${w.en()}`, `package ${a.replace(/[^a-z]/g, '')}`, '', 'import "strings"', '');
    lines.push(`// ${pascal(a, b)} holds the ${tail} settings.`, `type ${pascal(a, b)} struct {`, `\tLimit int`, `\tName  string`, '}', '');
    for (let f = 0; f < fns; f++) {
      const v = r.pick(EN_VERBS).replace(/ed$/, '');
      const c = r.pick(w.topic.en);
      lines.push(`// ${pascal(v, c)} ${w.en()}`, `func (x *${pascal(a, b)}) ${pascal(v, c)}(${camel(c)} string) bool {`, `\treturn len(${camel(c)}) < x.Limit && strings.Contains(${camel(c)}, x.Name)`, '}', '');
    }
  }
  return lines.join('\n');
}

/**
 * Document `index` of the corpus. Pure and independent of the corpus size.
 * @throws RangeError for a negative or fractional index
 */
export function docAt(index: number, opts: CorpusOptions = {}): CorpusDoc {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`index must be a non-negative integer, got ${index}`);
  const o = resolve(opts);
  const bucket = Math.floor(index / o.dirSize);
  const slot = index % o.dirSize;
  const rng = new Rng(hashSeed(o.seed, index));
  const { dir, topic: dirTopic, project } = bucketDir(bucket, o.seed);

  if (slot === 0 || slot === 1) {
    const w = new Writer(rng, dirTopic);
    const lang: Lang = rng.chance(0.2) ? 'zh' : 'en';
    if (slot === 0) {
      return { index, uri: `${dir}/.abstract.md`, content: w.paragraph(lang, 1), kind: 'dir-abstract', lang, topic: dirTopic.slug, nodeUri: dir, keywords: w.keywords(lang) };
    }
    const name = dir.slice(dir.lastIndexOf('/') + 1);
    const content = `---\ndirectory: ${name}\n---\n# ${w.title(lang)}\n\n${w.paragraph(lang, rng.int(2, 4))}`;
    return { index, uri: `${dir}/.overview.md`, content, kind: 'dir-overview', lang, topic: dirTopic.slug, nodeUri: dir, keywords: w.keywords(lang) };
  }

  const kind = rng.weighted(KIND_WEIGHTS);
  const isMemory = kind === 'memory' || kind === 'peer-memory' || kind === 'other-memory';
  const topic = isMemory ? rng.pick(TOPICS) : kind === 'resource' || kind === 'long-resource' || kind === 'code' ? dirTopic : rng.pick(WORK_TOPICS);
  const w = new Writer(rng, topic);
  const lang: Lang = kind === 'code' || kind === 'skill' ? 'en' : rng.chance(0.25) ? 'zh' : 'en';
  const slug = `${topic.slug}-${pad(index, 6)}`;
  let uri: string;
  let content: string;
  switch (kind) {
    case 'memory':
    case 'peer-memory':
    case 'other-memory': {
      const category = rng.pick(MEMORY_CATEGORIES);
      const date = `2026-${pad(rng.int(1, 12), 2)}-${pad(rng.int(1, 28), 2)}`;
      const root =
        kind === 'memory' ? `viking://user/${o.user}` : kind === 'peer-memory' ? `viking://user/${o.user}/peers/${rng.pick(PEERS)}` : `viking://user/other-${rng.int(1, 9)}`;
      const path = category === 'events' ? `events/${date.slice(0, 4)}/${date.slice(5, 7)}/${slug}.md` : `${category}/${slug}.md`;
      uri = `${root}/memories/${path}`;
      content = memoryBody(w, lang, category, date);
      break;
    }
    case 'resource':
      uri = `${dir}/${slug}.md`;
      content = markdown(w, lang, rng.int(1, 4), [1, 2], [2, 4]);
      break;
    case 'long-resource':
      // ~2,000 words: well above the ~512-token passage limit, so it is chunked.
      uri = `${dir}/${slug}-guide.md`;
      content = markdown(w, lang, rng.int(8, 14), [2, 3], [3, 5]);
      break;
    case 'code': {
      const ext = rng.pick(['ts', 'py', 'go'] as const);
      uri = `viking://resources/${project}/src/${dirTopic.slug}-${pad(bucket, 5)}/${slug}.${ext}`;
      content = codeFile(w, ext);
      break;
    }
    default: {
      const title = w.title('en');
      uri = `viking://agent/skills/${slug}/SKILL.md`;
      content = `---\nname: ${slug}\ndescription: ${w.en()}\n---\n# ${title}\n\n## When to use\n${w.paragraph('en', 2)}\n\n## Steps\n1. ${w.en()}\n2. ${w.en()}\n3. ${w.en()}`;
    }
  }
  return { index, uri, content, kind, lang, topic: topic.slug, nodeUri: uri, keywords: w.keywords(lang) };
}

/** Documents `from` (inclusive) to `to` (exclusive), lazily. */
export function* docs(from: number, to: number, opts: CorpusOptions = {}): Generator<CorpusDoc> {
  for (let i = from; i < to; i++) yield docAt(i, opts);
}

/** Kinds a caller can find (other users' memories are invisible to the bench's user). */
const QUERYABLE: ReadonlySet<DocKind> = new Set<DocKind>(['memory', 'peer-memory', 'resource', 'long-resource', 'code', 'skill', 'dir-abstract']);

/**
 * The query set: `count` queries, each written from the keywords of one visible document among
 * the first `pool` documents (so the same queries are valid at every corpus size ≥ pool),
 * in that document's language. Deterministic.
 * @param pool documents eligible as targets @default 1000
 * @throws RangeError when the pool holds no queryable document
 */
export function buildQueries(count: number, opts: CorpusOptions & { pool?: number } = {}): BenchQuery[] {
  const o = resolve(opts);
  const pool = opts.pool ?? 1000;
  const eligible = [...docs(0, pool, opts)].filter((d) => QUERYABLE.has(d.kind) && d.keywords.length > 0);
  if (eligible.length === 0) throw new RangeError(`no queryable document among the first ${pool}`);
  const out: BenchQuery[] = [];
  for (let q = 0; q < count; q++) {
    const r = new Rng(hashSeed(o.seed, 'query', q));
    const d = r.pick(eligible);
    const k = [...d.keywords];
    let text: string;
    if (d.lang === 'zh') {
      const latin = k.filter((w) => /^[a-z]/i.test(w));
      const zh = k.filter((w) => !/^[a-z]/i.test(w));
      const [a = '', b = ''] = zh.length > 0 ? zh : k;
      const t = latin[0];
      text = t
        ? r.pick([`关于${t}的${a}和${b}，我们之前是怎么处理的？`, `${t}${a}${b}的情况怎么样了`, `帮我回忆一下${t}、${a}相关的事情`])
        : r.pick([`关于${a}和${b}，我们之前是怎么处理的？`, `${a}${b}的情况怎么样了`]);
    } else {
      const [a = '', b = '', c = ''] = k;
      text = r.pick([`what did we decide about the ${a} ${b}?`, `how do we handle ${b} and ${a} ${c}`, `notes on ${a} ${c} ${b}`, `${a} ${b} ${c}`]);
    }
    out.push({ id: q, text: text.replace(/\s+/g, ' ').trim(), lang: d.lang, target: d.nodeUri, targetKind: d.kind, targetIndex: d.index });
  }
  return out;
}
