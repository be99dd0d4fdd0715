// Tests of scripts/doc-refs.mjs: `node --test scripts/doc-refs.test.mjs`. The section sign is
// written as S (\u00a7), and named references are assembled, so that this file cites nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { DOCS, defaultDocFor, extractRefs, loadDocs, main, parseSections, problemsOf } from './doc-refs.mjs';

const S = '\u00a7';
/** A named reference (the id, a space, quoted heading words), assembled so that this source holds none. */
const named = (words) => `retrieve-contract ${'"'}${words}"`;

/** Sections map of a tiny document. */
const sections = (...ids) => new Map(ids.map((id) => [id, `title ${id}`]));

/** Extract and return `[doc, sections, how]` of every reference in `text`. */
function resolved(text, path = 'libs/x/src/a.ts') {
  return extractRefs(text, path).map((r) => [r.doc, r.sections.join('..'), r.how]);
}

describe('parseSections', () => {
  it('reads numbered headings with or without a trailing dot, at any depth', () => {
    const md = ['# Title', '## 5. Budget', '### 5.3 Placement', '#### 5.3.1 Deep', '## Unnumbered', '### 11.2 Hazards'].join('\n');
    assert.deepEqual([...parseSections(md).keys()], ['5', '5.3', '5.3.1', '11.2']);
    assert.equal(parseSections(md).get('5.3'), 'Placement');
  });

  it('ignores headings inside fenced code', () => {
    const md = ['## 1. Real', '```text', '## 2. Not a heading', '```', '## 3. Real too'].join('\n');
    assert.deepEqual([...parseSections(md).keys()], ['1', '3']);
  });
});

describe('defaultDocFor', () => {
  it('uses the longest matching path prefix', () => {
    assert.equal(defaultDocFor('services/sessions/src/domain/ranges.ts'), 'overflow-recovery');
    assert.equal(defaultDocFor('services/gateway/src/routes/search.ts'), 'context-contract');
    assert.equal(defaultDocFor('test/e2e/plugins.e2e.test.ts'), 'plugin-client');
    assert.equal(defaultDocFor('test/e2e/mcp.e2e.test.ts'), 'context-contract');
    assert.equal(defaultDocFor('deploy/k8s/base/gateway.yaml'), 'design');
  });

  it('makes a document of docs/ cite itself', () => {
    for (const [id, file] of Object.entries(DOCS)) assert.equal(defaultDocFor(file), id);
  });
});

describe('extractRefs', () => {
  it('takes an explicit id right before the sign, also as a .md file or a markdown link', () => {
    assert.deepEqual(resolved(`see overflow-recovery ${S}3.6 and \`plugin-client.md\` ${S}1.3`), [
      ['overflow-recovery', '3.6', 'explicit'],
      ['plugin-client', '1.3', 'explicit'],
    ]);
    assert.deepEqual(resolved(`[retrieve-contract](retrieve-contract.md) ${S}5`), [['retrieve-contract', '5', 'explicit']]);
    assert.deepEqual(resolved(`(DESIGN ${S}6)`), [['design', '6', 'explicit']]);
  });

  it('carries a document along a list on the same line, and only there', () => {
    const text = [`Budget (overflow-recovery ${S}1.8, ${S}3.6) and`, `later ${S}3.6 again`].join('\n');
    assert.deepEqual(resolved(text), [
      ['overflow-recovery', '1.8', 'explicit'],
      ['overflow-recovery', '3.6', 'list'],
      ['context-contract', '3.6', 'default'],
    ]);
  });

  it('takes the id that ends the previous line when the sign starts a comment line', () => {
    const text = ['// the log and its projections (overflow-recovery', `// ${S}3): surface, ranges`].join('\n');
    assert.deepEqual(resolved(text), [['overflow-recovery', '3', 'previous-line']]);
    // Not when other words come before the sign on its own line.
    const prose = ['// see overflow-recovery', `// and then ${S}3 here`].join('\n');
    assert.deepEqual(resolved(prose), [['context-contract', '3', 'default']]);
  });

  it('falls back to the default of the path', () => {
    assert.deepEqual(resolved(`the ${S}3.4 state machine`, 'services/sessions/src/domain/recovery.ts'), [['overflow-recovery', '3.4', 'default']]);
  });

  it('reads both ends of a range, with or without a second sign', () => {
    assert.deepEqual(resolved(`(${S}5.2\u2013${S}5.4) and ${S}3-8`), [
      ['context-contract', '5.2..5.4', 'default'],
      ['context-contract', '3..8', 'list'],
    ]);
  });

  it('stops a section number at a sentence dot', () => {
    assert.deepEqual(resolved(`as in ${S}3.6. Then`), [['context-contract', '3.6', 'default']]);
  });

  it('finds headings named by their words', () => {
    const refs = extractRefs(`graph assist (${named('Stages')}): …`, 'a.ts');
    assert.deepEqual(
      refs.map((r) => [r.doc, r.name, r.how]),
      [['retrieve-contract', 'Stages', 'named']],
    );
  });
});

describe('problemsOf', () => {
  const docs = new Map([
    ['context-contract', sections('1', '1.7', '3', '3.6', '5', '5.2', '5.3', '5.4')],
    ['overflow-recovery', sections('3', '3.6')],
    ['retrieve-contract', new Map([['5', 'Stages']])],
    ['plugin-client', null],
  ]);
  const at = (path, text) => extractRefs(text, path).map((r) => ({ ...r, path }));

  it('accepts references whose sections exist', () => {
    const refs = [...at('a.ts', `ok ${S}1.7 and ${S}5.2\u2013${S}5.4`), ...at('services/sessions/b.ts', `the ${S}3.6 table`)];
    assert.equal(refs.length, 3);
    assert.deepEqual(problemsOf(refs, docs), []);
  });

  it('names the file and line of a missing section, and the rule that chose the document', () => {
    const refs = at('src/a.ts', `fine ${S}1.7\nbroken ${S}9.9 and overflow-recovery ${S}8.1`);
    const problems = problemsOf(refs, docs);
    assert.equal(problems.length, 2);
    assert.match(problems[0], /^src\/a\.ts:2: .*context-contract .*9\.9 \(default of src\/a\.ts\): no such section in docs\/context-contract\.md$/);
    assert.match(problems[1], /^src\/a\.ts:2: .*overflow-recovery .*8\.1 \(explicit\)/);
  });

  it('checks both ends of a range', () => {
    const problems = problemsOf(at('a.ts', `${S}5.2\u2013${S}5.9`), docs);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /5\.9/);
  });

  it('reports a document that does not exist', () => {
    const problems = problemsOf(at('a.ts', `plugin-client ${S}1.3`), docs);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /docs\/plugin-client\.md does not exist/);
  });

  it('matches named headings by their words, case-insensitively', () => {
    assert.deepEqual(problemsOf(at('a.ts', named('stages')), docs), []);
    const problems = problemsOf(at('a.ts', named('Traces')), docs);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /no heading of docs\/retrieve-contract\.md contains "Traces"/);
  });

  it('with strict, flags a bare reference in a file that cites another document, but not in docs/', () => {
    const text = `see overflow-recovery ${S}3.6\nand the bare ${S}3.6`;
    assert.deepEqual(problemsOf(at('src/a.ts', text), docs), []);
    const strict = problemsOf(at('src/a.ts', text), docs, { strict: true });
    assert.equal(strict.length, 1);
    assert.match(strict[0], /^src\/a\.ts:2: .* is bare but the file also cites overflow-recovery: give it a prefix$/);
    assert.deepEqual(problemsOf(at('docs/context-contract.md', text), docs, { strict: true }), []);
  });
});

describe('main', () => {
  /** A throwaway git repository with `files`; returns its root. */
  function repo(files) {
    const root = mkdtempSync(join(tmpdir(), 'doc-refs-'));
    execFileSync('git', ['init', '-q'], { cwd: root });
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }
  /** Run main on `root`, collecting what it prints. */
  function run(root, argv = []) {
    const lines = { log: [], error: [] };
    const code = main(argv, root, { log: (l) => lines.log.push(l), error: (l) => lines.error.push(l) });
    return { code, ...lines };
  }
  const docs = {
    'docs/context-contract.md': '## 1. Endpoints\n### 1.7 Errors\n',
    'docs/overflow-recovery.md': '## 3. Service\n### 3.6 Bad inputs\n',
  };

  it('exits 0 and prints a summary when every reference resolves', (t) => {
    const root = repo({ ...docs, 'services/sessions/src/a.ts': `// ${S}3.6\n`, 'libs/k/src/b.ts': `// ${S}1.7 and overflow-recovery ${S}3\n` });
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const r = run(root);
    assert.equal(r.code, 0);
    assert.deepEqual(r.error, []);
    assert.match(r.log.at(-1), /^doc-refs: 3 references in 2 files .*; 0 problem\(s\)/);
  });

  it('exits 1 with one file:line per problem, generated code and lock files left out', (t) => {
    const root = repo({
      ...docs,
      'services/gateway/src/c.ts': `// ok ${S}1.7\n// wrong ${S}3.6\n`,
      'libs/proto/src/gen/x.ts': `// ${S}99\n`,
      'package-lock.json': `"${S}99"`,
    });
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const r = run(root);
    assert.equal(r.code, 1);
    assert.equal(r.error.length, 2);
    assert.match(r.error[0], /^services\/gateway\/src\/c\.ts:2: /);
    assert.match(r.error[1], /1 problem\(s\) on 1 line\(s\)/);
  });

  it('lists every reference with --list', (t) => {
    const root = repo({ ...docs, 'a.ts': `// ${S}1 and ${S}1.7\n` });
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const r = run(root, ['--list']);
    assert.deepEqual(r.log.slice(0, 2), [`a.ts:1\t${S}1\tcontext-contract\tdefault`, `a.ts:1\t${S}1.7\tcontext-contract\tlist`]);
  });
});

describe('the repository', () => {
  it('has every document of DOCS, each with numbered sections', () => {
    const root = resolve(import.meta.dirname, '..');
    for (const [id, s] of loadDocs(root)) {
      assert.ok(s !== null, `${DOCS[id]} is missing`);
      assert.ok(s.size > 0, `${DOCS[id]} has no numbered section`);
    }
  });
});
