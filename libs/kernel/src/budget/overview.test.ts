import { FrontMatterError } from '../errors';
import {
  computeAbstract,
  documentOverview,
  extractSummary,
  firstParagraph,
  prepareBody,
  prepareTierTexts,
  stripDirectoryFrontMatter,
  stripMemoryFields,
} from './overview';
import { codePointLength } from './python';

const MEM = 'viking://user/default/memories/events/a.md';
const DOC = 'viking://resources/docs/readme.md';
const DIR = 'viking://resources/docs';

describe('prepareBody', () => {
  const fields = '\n\n<!-- MEMORY_FIELDS\n{"version":1,"tags":["x"]}\n-->\x0b';

  it('strips the metadata comment from memory files and trims', () => {
    expect(prepareBody(MEM, false, `  # Summary\ngist${fields}`)).toBe('# Summary\ngist');
  });

  it('keeps the comment outside /memories/ and in directory sidecars', () => {
    expect(prepareBody(DOC, false, `text${fields}`)).toBe(`text${fields}`.trim().replace(/\x0b$/, ''));
    expect(prepareBody('viking://user/default/memories/events', true, `x${fields}`)).toContain('MEMORY_FIELDS');
  });

  it('reads a failed read as empty', () => {
    expect(prepareBody(MEM, false, null)).toBe('');
    expect(prepareBody(DOC, false, undefined)).toBe('');
  });

  it('removes every metadata comment', () => {
    expect(stripMemoryFields('a<!--MEMORY_FIELDS {} -->b<!-- MEMORY_FIELDS\n{}\n-->')).toBe('ab');
  });
});

describe('stripDirectoryFrontMatter', () => {
  it('removes the front matter and trims', () => {
    expect(stripDirectoryFrontMatter('---\ndirectory: "viking://resources/docs/"\n---\n\n# Docs\nAll docs.\n\n')).toBe('# Docs\nAll docs.');
  });

  it('recognises CRLF front matter and keeps the CRLF body', () => {
    expect(stripDirectoryFrontMatter('---\r\ndirectory: "viking://a/"\r\ngenerated_by:\r\n  component: x\r\n---\r\n\r\nline1\r\nline2\r\n')).toBe(
      'line1\r\nline2',
    );
  });

  it('accepts duplicate keys as PyYAML does', () => {
    expect(stripDirectoryFrontMatter('---\ndirectory: a\ndirectory: b\n---\nbody')).toBe('body');
  });

  it('uses content without an opening line as-is', () => {
    expect(stripDirectoryFrontMatter('  # Docs\n---\nx: 1\n---\n')).toBe('# Docs\n---\nx: 1\n---');
    expect(stripDirectoryFrontMatter('--- \ndirectory: x\n---\nbody')).toBe('--- \ndirectory: x\n---\nbody');
  });

  it.each([
    ['not_closed', '---\ndirectory: "viking://a/"\n\n# Body'],
    ['not_an_object', '---\n- a list\n---\nbody'],
    ['not_an_object', '---\n---\nbody'],
    ['missing_directory', '---\ntitle: x\n---\nbody'],
    ['invalid_yaml', '---\ndirectory: [unclosed\n---\nbody'],
    ['invalid_yaml', '---\ndirectory: !custom x\n---\nbody'],
    ['invalid_yaml', '---\ndirectory: x\n\tbad: tab\n---\nbody'],
  ])('refuses front matter that is %s', (problem, text) => {
    let caught: unknown;
    try {
      stripDirectoryFrontMatter(text);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(FrontMatterError);
    expect((caught as FrontMatterError).problem).toBe(problem);
    expect((caught as FrontMatterError).name).toBe('FrontMatterError');
  });
});

describe('extractSummary', () => {
  it('takes the section under a Summary heading (§4.4 example)', () => {
    expect(extractSummary('# Summary\ngist\n\n# ChatLog:\n…')).toBe('gist');
  });

  it('finds the heading anywhere, at levels 1–3, in any case, with trailing spaces', () => {
    expect(extractSummary('intro\n\n###SUMMARY  \n  the gist  \n## Next\nrest')).toBe('the gist');
    expect(extractSummary('## summary\t\nA\n#### not a boundary\nB\n# End')).toBe('A\n#### not a boundary\nB');
  });

  it('ignores level-4 headings and headings that say more than Summary', () => {
    expect(extractSummary('#### Summary\ngist')).toBe('');
    expect(extractSummary('# Summary of things\ngist')).toBe('');
  });

  it('reads the legacy Summary: form up to a ChatLog line (§4.4 example)', () => {
    expect(extractSummary('Summary: actor only.\n2026-07-09 ChatLog: details')).toBe('actor only.');
  });

  it.each([
    ['Summary: a\n  b\n2026-07-09ChatLog: x', 'a b'],
    ['Summary: a\n2026-07-09 (Thu) ChatLog: x', 'a'],
    ['Summary: a\n２０２６-０７-０９ ChatLog: x', 'a'],
    ['Summary: a\x1fb\nChatLog: x', 'a b'],
    ['Summary: a\n<!-- MEMORY_FIELDS\n{}\n-->', 'a'],
    ['Summary:\ta\n\n b', 'a b'],
  ])('ends the legacy summary correctly in %j', (body, want) => {
    expect(extractSummary(body)).toBe(want);
  });

  it('needs the legacy form at the very start', () => {
    expect(extractSummary('Note\nSummary: a')).toBe('');
  });

  it('falls back to the legacy form when the Summary section is empty', () => {
    expect(extractSummary('Summary: legacy\n# Summary\n\n# Next')).toBe('legacy # Summary # Next');
  });
});

describe('documentOverview', () => {
  it('renders the heading tree and first paragraph (§4.4 example)', () => {
    expect(documentOverview('# Title\nIntro line one\nline two\n\n## Install\n\nRun it.\n### Deep\n#### Deeper\n')).toBe(
      '# Title\n  ## Install\n    ### Deep\n\nIntro line one\nline two',
    );
  });

  it('keeps at most 24 headings', () => {
    const text = Array.from({ length: 30 }, (_, i) => `## H${i}`).join('\n');
    const lines = documentOverview(text).split('\n');
    expect(lines).toHaveLength(24);
    expect(lines[23]).toBe('  ## H23');
  });

  it('cuts the first paragraph to 400 code points', () => {
    const para = '😀'.repeat(450);
    const out = documentOverview(para);
    expect(codePointLength(out)).toBe(400);
    expect(out).toBe('😀'.repeat(400));
  });

  it('needs a space or tab after the hashes and trims the title end', () => {
    // The whole result is trimmed, so a leading level-2 heading loses its indent.
    expect(documentOverview('#Title\n##  Two \t\nbody')).toBe('## Two\n\nbody');
  });

  it('keeps a CR in CRLF titles, as Python `.` does', () => {
    expect(documentOverview('# Title\r\n\r\nbody\r\n')).toBe('# Title\r\n\nbody');
  });

  it('is empty for an empty document', () => {
    expect(documentOverview('')).toBe('');
  });
});

describe('firstParagraph', () => {
  it('skips heading-only blocks and lines starting with #', () => {
    expect(firstParagraph('# T\n\n  # indented\n\nfirst\n# mid\nsecond\n\nthird')).toBe('first\nsecond');
  });

  it('splits on blank lines made of Python whitespace', () => {
    expect(firstParagraph('a\n \x1f\t\nb')).toBe('a');
  });

  it('re-joins lines split on every Python line boundary with \\n', () => {
    expect(firstParagraph('a\fb\x85c\r\nd')).toBe('a\nb\nc\nd');
  });
});

describe('prepareTierTexts', () => {
  it('keeps the \\r of a CRLF heading tree\'s last heading before the blank line, as the reference does (issue 11 item 4)', () => {
    // The reference reads the heading tree from the decoded body (§4.1: only `full` is the
    // trimmed body), so a last heading line ending in CRLF keeps its "\r"; only the result is trimmed.
    const raw = 'Intro para.\r\n\r\n# Title\r\n## Install\r\n';
    const t = prepareTierTexts({ uri: 'viking://resources/docs/crlf.md' }, raw);
    expect(t.overview).toBe('# Title\r\n  ## Install\r\n\nIntro para.');
    expect(t.full).toBe('Intro para.\r\n\r\n# Title\r\n## Install');
    // The same tree with LF line ends has nothing to keep.
    expect(prepareTierTexts({ uri: 'viking://resources/docs/lf.md' }, raw.replace(/\r/g, '')).overview).toBe('# Title\n  ## Install\n\nIntro para.');
    // A memory body is trimmed before any tier is read (§4.1), so its tree ends without "\r".
    expect(prepareTierTexts({ uri: 'viking://user/u/memories/entities/crlf.md' }, raw).overview).toBe('# Title\r\n  ## Install\n\nIntro para.');
  });

  it('serves a directory from its sidecar and never has full', () => {
    const t = prepareTierTexts({ uri: DIR, is_directory: true }, '---\ndirectory: "viking://resources/docs/"\n---\nAll docs.');
    expect(t).toEqual({ overview: 'All docs.', full: '' });
  });

  it('reports a refused front matter instead of throwing', () => {
    const t = prepareTierTexts({ uri: DIR, is_directory: true }, '---\ndirectory: x\nno close');
    expect(t.overview).toBe('');
    expect(t.full).toBe('');
    expect(t.overviewError).toBeInstanceOf(FrontMatterError);
    expect(t.overviewError!.problem).toBe('not_closed');
  });

  it('uses the code outliner first and falls through when it has nothing', () => {
    const calls: string[] = [];
    const outliner = (name: string, src: string) => {
      calls.push(name);
      return name.endsWith('.ts') ? `# ${name} [TypeScript]\nfunction f()` : null;
    };
    const code = prepareTierTexts({ uri: 'viking://resources/src/main.ts', is_directory: false }, 'export function f() {}\n', { outliner });
    expect(code.overview).toBe('# main.ts [TypeScript]\nfunction f()');
    expect(code.full).toBe('export function f() {}');
    const doc = prepareTierTexts({ uri: DOC, is_directory: false }, '# Readme\nhello', { outliner });
    expect(doc.overview).toBe('# Readme\n\nhello');
    expect(calls).toEqual(['main.ts', 'readme.md']);
  });

  it('falls through an empty skeleton and never outlines a directory', () => {
    let called = 0;
    const outliner = () => {
      called++;
      return '  ';
    };
    expect(prepareTierTexts({ uri: 'viking://resources/src/x.py', is_directory: false }, '# T\nbody', { outliner }).overview).toBe('# T\n\nbody');
    expect(prepareTierTexts({ uri: DIR, is_directory: true }, 'dir text', { outliner }).overview).toBe('dir text');
    expect(called).toBe(1);
  });

  it('prefers the Summary for memory files and the heading tree elsewhere', () => {
    const body = '# Summary\ngist\n\n# ChatLog\nlog';
    expect(prepareTierTexts({ uri: MEM, is_directory: false }, body).overview).toBe('gist');
    expect(prepareTierTexts({ uri: DOC, is_directory: false }, body).overview).toBe('# Summary\n# ChatLog\n\ngist');
  });

  it('has neither tier for a failed read', () => {
    expect(prepareTierTexts({ uri: MEM, is_directory: false }, null)).toEqual({ overview: '', full: '' });
  });
});

describe('computeAbstract', () => {
  it('uses the Summary of a memory', () => {
    expect(computeAbstract(MEM, '# Summary\nShipped  the\nproxy.\n\n# ChatLog\nlog')).toBe('Shipped the proxy.');
  });

  it('uses the first paragraph of a document', () => {
    expect(computeAbstract(DOC, '# Title\n\nFirst para\nline two.\n\nSecond.')).toBe('First para line two.');
  });

  it('cuts long text on a word boundary to at most 256 code points', () => {
    const out = computeAbstract(DOC, 'word '.repeat(200));
    expect(codePointLength(out)).toBeLessThanOrEqual(256);
    expect(out.endsWith('word…')).toBe(true);
  });

  it('cuts text without spaces on a character boundary', () => {
    const out = computeAbstract(DOC, '😀中'.repeat(300));
    expect(codePointLength(out)).toBe(256);
    expect(out.endsWith('…')).toBe(true);
    expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(out)).toBe(false);
  });

  it('is empty for an empty body', () => {
    expect(computeAbstract(DOC, '  ')).toBe('');
    expect(computeAbstract(DOC, null)).toBe('');
  });
});
