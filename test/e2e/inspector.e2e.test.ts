/**
 * The inspector page in a real browser (issue 14): Debian's Chromium (`/usr/bin/chromium`)
 * driven by playwright-core, kept off the network by its flags and a fresh profile. The mesh
 * runs in process in `api_key` mode with a seeded corpus; the test opens a link to
 * `/inspect`, gives the page its key, and checks what a person would: the budget bar's
 * segments add up to `used_tokens`, every entry of the block has a row, and on the second
 * turn of the same session the URIs served on the first show `cooled` with that turn. It saves
 * screenshots under test-output/inspector/. Without Chromium it fails: `.ci/run` installs it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page, type Response } from 'playwright-core';
import { silentLogger } from '@ctxmesh/runtime';
import { startMesh, type Mesh } from '@ctxmesh/ctxmesh';

const CHROMIUM = '/usr/bin/chromium';
/** Flags that keep Chromium off the network and out of the machine's state. */
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const OUT = resolve(__dirname, '../../test-output/inspector');
const KEY = 'inspect-key-1';

const SEED: Record<string, string> = {
  'viking://resources/ops/deploy.md': '# Deploy\n\nWe deploy the gateway with blue/green releases behind the load balancer.\n\n## Rollback\n\nTo roll back, switch traffic to the previous colour and keep it warm for an hour.',
  'viking://resources/ops/rollback-checklist.md': '# Rollback checklist\n\n1. Announce the rollback.\n2. Switch the load balancer to the previous release.\n3. Watch the error rate for ten minutes.',
  'viking://resources/ops/incidents.md': '# Incidents\n\nThe March incident was a bad release; we rolled back in four minutes with the blue/green switch.',
  'viking://resources/dev/testing.md': '# Testing\n\nEvery change runs the unit, integration and end-to-end suites before a release.',
  'viking://user/acme-ana/memories/events/2026/rollback-drill.md': '# Summary\nRan a rollback drill of the gateway: the switch took 90 seconds.\n\n# ChatLog\nuser: can we roll back faster?',
  'viking://user/acme-ana/memories/events/2026/release-freeze.md': '# Summary\nAgreed a release freeze before the launch; rollbacks only, no new features.',
  'viking://user/acme-ana/memories/preferences/rollout.md': 'Prefers canary releases for risky changes and a rollback plan written before the release.',
  ...Object.fromEntries(
    ['database', 'cache', 'search', 'indexer', 'sessions', 'ledger', 'gather', 'renderer'].map((name) => [
      `viking://resources/ops/services/${name}.md`,
      `# ${name}\n\nHow to release the ${name} service, and how to roll back a bad ${name} release: redeploy the previous image and check its health.`,
    ]),
  ),
};

let mesh: Mesh;
let dataDir: string;
let profile: string;
let context: BrowserContext;
const offsite: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does it)`);
  dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-inspect-'));
  mesh = await startMesh({
    env: { CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: '0', CTXMESH_AUTH_MODE: 'api_key', CTXMESH_API_KEYS: `${KEY}=acme:acme-ana`, RETRIEVAL_TRACE_ENABLED: 'true' },
    log: silentLogger(),
  });
  for (const [uri, content] of Object.entries(SEED)) {
    const res = await fetch(`${mesh.gatewayUrl}/api/v1/content/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ uri, content, wait: true }),
    });
    if (res.status !== 200) throw new Error(`seeding ${uri}: ${res.status} ${await res.text()}`);
  }
  mkdirSync(OUT, { recursive: true });
  // A fresh, empty profile: launchPersistentContext passes it as --user-data-dir.
  profile = mkdtempSync(join(tmpdir(), 'ctxmesh-chromium-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1400, height: 1100 } });
  context.on('request', (r) => {
    if (!r.url().startsWith(mesh.gatewayUrl)) offsite.push(r.url());
  });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await mesh?.stop();
  for (const d of [dataDir, profile]) if (d) rmSync(d, { recursive: true, force: true });
});

interface ContextAnswer {
  entries: Array<{ uri: string; detail: string }>;
  stats: { used_tokens: number; max_tokens: number };
  explain: { candidates: Array<{ uri: string; reason: string; cooled_turn?: number }>; stages: unknown[] };
}

/** The page's own context request (the response it drew from). */
const contextResponse = (page: Page) => page.waitForResponse((r: Response) => r.url().endsWith('/api/v1/search/search') && r.request().method() === 'POST');

/** What the page drew: the bar's segments (and their drawn widths), the table's rows, the stage rows. */
interface Drawn {
  used: number;
  max: number;
  /** Each segment's drawn width as a share of the bar's inner width. */
  widths: number[];
  segments: Array<{ kind: string; uri: string | null; tokens: number }>;
  rows: Array<{ uri: string; reason: string; text: string }>;
  stages: number;
  error: string;
}

// Runs in the page (browser JavaScript, so a string: this project's types have no DOM). The
// drawn widths show a style the page's CSP refused (every segment full width).
const DRAWN = `(() => {
  const bar = document.getElementById('budget-bar');
  const segs = [...bar.querySelectorAll('.segment')];
  const barWidth = bar.getBoundingClientRect().width - 2;
  const error = document.getElementById('error');
  return {
    used: Number(bar.dataset.usedTokens),
    max: Number(bar.dataset.maxTokens),
    widths: segs.map((s) => s.getBoundingClientRect().width / barWidth),
    segments: segs.map((s) => ({ kind: s.dataset.kind, uri: s.dataset.uri ?? null, tokens: Number(s.dataset.tokens) })),
    rows: [...document.querySelectorAll('#candidates-body tr')].map((r) => ({ uri: r.dataset.uri, reason: r.dataset.reason, text: r.querySelector('td.reason').textContent })),
    stages: document.querySelectorAll('#stages .stage-row').length,
    error: error.hidden ? '' : error.textContent,
  };
})()`;

const drawn = (page: Page) => page.evaluate<Drawn>(DRAWN);

describe('the inspector in Chromium', () => {
  // compat serves a fixed ten candidates a turn, so the second turn has fresh ones to draw beside
  // the cooled ones (the default, evidence, serves all the evidence on the first).
  const link = () => `${mesh.gatewayUrl}/inspect?q=${encodeURIComponent('how do we roll back a release')}&session=inspect-s1&max_tokens=900&dedup_turns=5&packing=compat`;

  it('a link asks for the key, keeps it in the tab, and draws the answer: segments sum to used_tokens, a row per entry', async () => {
    const page = await context.newPage();
    await page.goto(link());
    await page.waitForSelector('#key-form:not([hidden])');
    expect(await page.textContent('#key-why')).toContain('api_key');
    await page.fill('#api-key', KEY);
    const [res] = await Promise.all([contextResponse(page), page.click('#key-form button[type=submit]')]);
    const answer = (await res.json()).result as ContextAnswer;
    await page.waitForSelector('#results:not([hidden])');
    const d = await drawn(page);

    expect(d.error).toBe('');
    expect(answer.entries.length).toBeGreaterThan(1);
    expect(d.used).toBe(answer.stats.used_tokens);
    const sum = d.segments.reduce((n, s) => n + s.tokens, 0);
    expect(sum).toBe(answer.stats.used_tokens);
    expect(d.segments.filter((s) => s.kind === 'entry').map((s) => s.uri)).toEqual(answer.entries.map((e) => e.uri));
    // Each segment is drawn at its share of max_tokens (to a pixel).
    d.segments.forEach((s, i) => expect(Math.abs(d.widths[i] - s.tokens / d.max)).toBeLessThan(0.002));
    expect(await page.isHidden('#key-form')).toBe(true);
    for (const e of answer.entries) expect(d.rows.filter((r) => r.uri === e.uri && r.reason === 'served')).toHaveLength(1);
    expect(d.rows).toHaveLength(answer.explain.candidates.length);
    expect(d.stages).toBe(answer.explain.stages.length);
    expect(await page.textContent('#rendered')).toContain('<memory uri=');

    // The key lives in this tab's sessionStorage only: no localStorage, no cookie, not in the URL.
    const storage = await page.evaluate<{ session: string | null; local: number; cookie: string }>(
      `({ session: sessionStorage.getItem('ctxmesh.inspect.api_key'), local: localStorage.length, cookie: document.cookie })`,
    );
    expect(storage).toEqual({ session: KEY, local: 0, cookie: '' });
    expect(page.url()).not.toContain(KEY);
    // The query's state is in the URL: the link reproduces it.
    expect(new URL(page.url()).searchParams.get('session')).toBe('inspect-s1');
    await page.screenshot({ path: join(OUT, 'inspector-first-turn.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('the second turn of the session - the URIs served on the first show cooled with the turn they were served', async () => {
    const first = await context.newPage();
    // A new tab of the same browser: sessionStorage is per tab, so it asks for the key again.
    await first.goto(link());
    await first.waitForSelector('#key-form:not([hidden])');
    await first.fill('#api-key', KEY);
    const [res] = await Promise.all([contextResponse(first), first.click('#key-form button[type=submit]')]);
    const answer = (await res.json()).result as ContextAnswer;
    await first.waitForSelector('#results:not([hidden])');
    const d = await drawn(first);
    const cooled = d.rows.filter((r) => r.reason === 'cooled');
    expect(cooled.length).toBeGreaterThan(0);
    const explained = new Map(answer.explain.candidates.map((c) => [c.uri, c]));
    for (const r of cooled) {
      const turn = explained.get(r.uri)?.cooled_turn;
      expect(typeof turn).toBe('number');
      expect(r.text).toBe(`cooled (served turn ${turn})`);
    }
    // What was served on the first turn is not served again.
    for (const r of cooled) expect(answer.entries.map((e) => e.uri)).not.toContain(r.uri);
    expect(answer.entries.length).toBeGreaterThan(0);
    expect(d.segments.reduce((n, s) => n + s.tokens, 0)).toBe(answer.stats.used_tokens);
    await first.locator('tr.reason-cooled').first().scrollIntoViewIfNeeded();
    await first.screenshot({ path: join(OUT, 'inspector-second-turn.png'), fullPage: true });
    expect(existsSync(join(OUT, 'inspector-second-turn.png'))).toBe(true);
    await first.close();
  }, 60_000);

  it('the session view shows the log, its blocks and budgets; the trace view a retrieve trace', async () => {
    const api = (path: string, body: unknown) =>
      fetch(`${mesh.gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify(body) });
    const say = (type: string, t: string) => ({ type, content: [{ type: 'text', text: t }] });
    const appended = await api('/api/v1/sessions/inspect-log/events', { events: [say('user/message', 'how do we roll back?'), say('assistant/message', 'Switch the load balancer back.')], agent_id: 'agent-1' });
    expect(appended.status).toBe(200);
    const retrieved = await api('/api/v1/retrieve', { query: 'roll back a release', top_k: 3 });
    const traceId = ((await retrieved.json()) as { result: { trace_id: string | null } }).result.trace_id;
    expect(traceId).toMatch(/\S/);

    const page = await context.newPage();
    await page.goto(`${mesh.gatewayUrl}/inspect?view=session&session=inspect-log`);
    await page.fill('#api-key', KEY);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#session-out table');
    const session = await page.textContent('#session-out');
    expect(session).toContain('how do we roll back?');
    expect(session).toContain('Switch the load balancer back.');
    for (const h of ['Log (projected surface)', 'Blocks', 'Hidden (compressible) ranges', 'Overflow budgets']) expect(session).toContain(h);
    expect(await page.isHidden('#view-query')).toBe(true);

    await page.click('#tab-trace');
    await page.fill('#trace-id', traceId!);
    await page.click('#trace-form button[type=submit]');
    await page.waitForSelector('#trace-out pre');
    expect(await page.textContent('#trace-out pre')).toContain(traceId!);
    expect(new URL(page.url()).searchParams.get('trace')).toBe(traceId);
    expect(await page.locator('#trace-out table tbody tr').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(OUT, 'inspector-trace.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('packing evidence from a link - the page draws its fates too: segments sum to used_tokens, packing named', async () => {
    const page = await context.newPage();
    await page.goto(`${mesh.gatewayUrl}/inspect?q=${encodeURIComponent('roll back the database release')}&packing=evidence&max_tokens=600`);
    await page.fill('#api-key', KEY);
    const [res] = await Promise.all([contextResponse(page), page.click('#key-form button[type=submit]')]);
    const answer = (await res.json()).result as ContextAnswer & { explain: { packing: string } };
    await page.waitForSelector('#results:not([hidden])');
    const d = await drawn(page);
    expect(d.error).toBe('');
    expect(answer.explain.packing).toBe('evidence');
    expect(await page.textContent('#summary')).toContain('packing evidence');
    expect(d.segments.reduce((n, s) => n + s.tokens, 0)).toBe(answer.stats.used_tokens);
    for (const e of answer.entries) expect(d.rows.filter((r) => r.uri === e.uri && r.reason === 'served')).toHaveLength(1);
    await page.close();
  }, 60_000);

  it('loads nothing from outside the gateway', () => {
    expect(offsite).toEqual([]);
  });
});
