// @ts-check
/**
 * The inspector page (served by the gateway at /inspect): a context query with `explain`,
 * drawn as a budget bar, a candidate table, a stage time line, the rendered block and digest;
 * a session view and a trace view. Plain DOM, no framework, nothing loaded from elsewhere.
 * All data goes through the gateway's own API with the page's credentials: in `api_key` mode
 * the key the user types is kept in sessionStorage (this tab only) and sent as Bearer.
 */
import { budgetSegments, contextBody, percentOf, queryFromState, reasonText, stateFromQuery, TIERS, timeline } from './view.js';

const KEY_STORAGE = 'ctxmesh.inspect.api_key';
/** @type {{ name: string, version: string, auth_mode: string }} */
let config = { name: 'ctxmesh', version: '', auth_mode: 'dev' };
let state = stateFromQuery(location.search);

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * A new element with text and attributes.
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @param {Array<Node | string>} [children]
 */
function el(tag, attrs = {}, children = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = String(v);
    // Through the CSSOM: the page's CSP (style-src 'self') refuses style attributes.
    else if (k === 'style') e.style.cssText = String(v);
    else e.setAttribute(k, String(v));
  }
  for (const c of children) e.append(c);
  return e;
}

/** Request headers: the key in api_key mode, the identity in dev and trusted mode. */
function headers() {
  /** @type {Record<string, string>} */
  const h = { 'content-type': 'application/json' };
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (config.auth_mode === 'api_key' && key) h.authorization = `Bearer ${key}`;
  if (config.auth_mode !== 'api_key') {
    if (state.account) h['x-openviking-account'] = state.account;
    if (state.user) h['x-openviking-user'] = state.user;
  }
  return h;
}

/**
 * Call the API and unwrap the envelope.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<{ result: any, telemetry?: any, requestId: string | null }>}
 */
async function api(method, path, body) {
  const res = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (res.status === 401 && config.auth_mode === 'api_key') showKeyPrompt('the gateway refused the key: enter a valid one');
  if (!res.ok || json.status === 'error') {
    const err = json.error ?? {};
    throw new Error(`${res.status} ${err.code ?? ''}: ${err.message ?? res.statusText}`);
  }
  return { result: json.result, telemetry: json.telemetry, requestId: res.headers.get('x-request-id') };
}

/** @param {string} message */
function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = message === '';
}

/** @param {string} [why] */
function showKeyPrompt(why) {
  $('key-form').hidden = false;
  $('key-why').textContent = why ?? 'This gateway runs in api_key mode: enter an API key. It stays in this tab only.';
}

// ------------------------------------------------------------------------------------------
// The form and the URL

const FIELDS = ['q', 'account', 'user', 'session', 'purpose', 'max_tokens', 'detail', 'packing', 'tokenizer', 'dedup_turns', 'limit'];

function fillForm() {
  for (const f of FIELDS) {
    const input = /** @type {HTMLInputElement | HTMLSelectElement | null} */ (document.querySelector(`[name="${f}"]`));
    if (input) input.value = /** @type {Record<string, string>} */ (state)[f];
  }
  /** @type {HTMLInputElement} */ ($('trace-id')).value = state.trace;
  // The identity fields apply where the gateway takes identity from headers.
  $('identity').hidden = config.auth_mode === 'api_key';
}

function readForm() {
  const form = /** @type {HTMLFormElement} */ ($('query-form'));
  const data = new FormData(form);
  const next = { ...state };
  for (const f of FIELDS) /** @type {Record<string, string>} */ (next)[f] = String(data.get(f) ?? '');
  state = next;
}

/** Put the state in the URL (a link reproduces the view) and draw the active view. */
function pushState() {
  history.replaceState(null, '', `${location.pathname}${queryFromState(state)}`);
  for (const v of ['query', 'session', 'trace']) {
    $(`view-${v}`).hidden = state.view !== v;
    $(`tab-${v}`).setAttribute('aria-selected', String(state.view === v));
  }
}

// ------------------------------------------------------------------------------------------
// The query view

async function runQuery() {
  showError('');
  if (!state.q.trim()) return;
  $('results').hidden = true;
  $('status').textContent = 'asking…';
  try {
    const { result, requestId } = await api('POST', '/api/v1/search/search', contextBody(state));
    drawResult(result, requestId);
    $('status').textContent = '';
  } catch (e) {
    $('status').textContent = '';
    showError(/** @type {Error} */ (e).message);
  }
}

/**
 * @param {any} r the context-mode result (with `explain`)
 * @param {string | null} requestId
 */
function drawResult(r, requestId) {
  const stats = r.stats ?? {};
  const explain = r.explain ?? { candidates: [], stages: [], fill: { floor_tokens: 0, upgrade_tokens: 0 } };
  $('results').hidden = false;
  $('summary').textContent =
    `${r.entries.length} entries · ${stats.used_tokens} / ${stats.max_tokens} tokens · ${explain.candidates.length} candidates · ` +
    `packing ${explain.packing ?? 'compat'} · request ${requestId ?? '—'}` + (explain.trace_id ? ` · trace ${explain.trace_id}` : '');
  drawBudget(r.entries, explain, stats);
  drawCandidates(explain.candidates);
  drawStages(explain.stages ?? []);
  $('rendered').textContent = r.rendered || '(empty)';
  $('digest').textContent = r.digest || '(no digest: rewrite off or nothing relevant)';
}

/**
 * @param {Array<{ uri: string, detail: string }>} entries
 * @param {any} explain
 * @param {any} stats
 */
function drawBudget(entries, explain, stats) {
  const max = Number(stats.max_tokens) || 1;
  const bar = $('budget-bar');
  bar.replaceChildren();
  bar.dataset.maxTokens = String(max);
  bar.dataset.usedTokens = String(stats.used_tokens);
  /** @type {import("./view.js").Segment[]} */
  let segments;
  try {
    segments = budgetSegments(entries, explain.candidates, explain.account ?? null);
  } catch (e) {
    showError(/** @type {Error} */ (e).message);
    segments = [];
  }
  for (const s of segments) {
    const seg = el('div', {
      class: s.kind === 'entry' ? `segment tier-${s.tier}` : 'segment separator',
      style: `width:${percentOf(s.tokens, max)}%`,
      'data-tokens': s.tokens,
      'data-kind': s.kind,
      title: s.kind === 'entry' ? `#${s.index + 1} ${s.uri} · ${s.tier} · ${s.tokens} tokens` : 'separator · 1 token',
    });
    if (s.kind === 'entry') seg.dataset.uri = s.uri;
    bar.append(seg);
  }
  const fill = explain.fill ?? { floor_tokens: 0, upgrade_tokens: 0 };
  const split = $('fill-bar');
  split.replaceChildren(
    el('div', { class: 'segment floor', style: `width:${percentOf(fill.floor_tokens, max)}%`, 'data-tokens': fill.floor_tokens, title: `floor: ${fill.floor_tokens} tokens (breadth first)` }),
    el('div', { class: 'segment upgrade', style: `width:${percentOf(fill.upgrade_tokens, max)}%`, 'data-tokens': fill.upgrade_tokens, title: `upgrades: ${fill.upgrade_tokens} tokens (depth after)` }),
  );
  $('fill-legend').textContent = `floor ${fill.floor_tokens} + upgrades ${fill.upgrade_tokens} = ${fill.floor_tokens + fill.upgrade_tokens} of ${max} tokens`;
  $('tier-legend').replaceChildren(...TIERS.map((t) => el('span', { class: `legend tier-${t}`, text: t })));
}

/** @param {any[]} rows */
function drawCandidates(rows) {
  const body = $('candidates-body');
  body.replaceChildren(
    ...rows.map((c) => {
      const tokens = TIERS.map((t) => {
        const n = c.tokens?.[t];
        return el('td', { class: `num${c.tier === t ? ' chosen' : ''}`, text: n === null || n === undefined ? '—' : n });
      });
      const num = (/** @type {number | null} */ v) => (typeof v === 'number' ? v.toFixed(3) : '—');
      return el('tr', { 'data-uri': c.uri, 'data-reason': c.reason, class: `reason-${c.reason}` }, [
        el('td', { class: 'num', text: c.rank ?? '—' }),
        el('td', { class: 'uri', text: c.uri }),
        el('td', { text: c.category ?? '' }),
        el('td', { text: c.origin ?? '' }),
        el('td', { class: 'num', text: num(c.score) }),
        el('td', { class: 'num', text: num(c.ranked_score) }),
        el('td', { class: c.tier ? `tier tier-${c.tier}` : '', text: c.tier ?? '—' }),
        ...tokens,
        el('td', { class: 'reason', text: reasonText(c) }),
      ]);
    }),
  );
}

/** @param {Array<{ stage: string, outcome: string, start_ms: number, ms: number }>} stages */
function drawStages(stages) {
  const box = $('stages');
  box.replaceChildren(
    ...timeline(stages).map((s) =>
      el('div', { class: 'stage-row', 'data-stage': s.stage }, [
        el('span', { class: 'stage-name', text: s.stage }),
        el('span', { class: 'stage-track' }, [el('span', { class: `stage-bar outcome-${s.outcome}`, style: `margin-left:${s.left}%;width:${s.width}%`, title: `${s.outcome} · ${s.ms} ms` })]),
        el('span', { class: 'num', text: `${s.ms.toFixed(2)} ms ${s.outcome === 'ok' ? '' : s.outcome}` }),
      ]),
    ),
  );
}

// ------------------------------------------------------------------------------------------
// The session view: the log's surface, its blocks and hidden ranges, the overflow budgets.

async function runSession() {
  showError('');
  const box = $('session-out');
  box.replaceChildren();
  if (!state.session) {
    box.append(el('p', { text: 'Name a session in the form to see its log.' }));
    return;
  }
  const sid = encodeURIComponent(state.session);
  try {
    const [status, surface] = await Promise.all([
      api('GET', `/api/v1/sessions/${sid}/status`),
      api('POST', `/api/v1/sessions/${sid}/surface:project`, { include_ranges: true }),
    ]);
    const s = status.result;
    box.append(
      el('p', { text: `head ${s.head} · generation ${s.generation} · ${s.surface_nodes} surface nodes · ${s.rank_tokens} rank tokens` }),
      el('h3', { text: 'Log (projected surface)' }),
      table(['seq', 'role', 'class', 'text'], surface.result.messages.map((/** @type {any} */ m) => [m.seq, m.role, m.class, String(m.text).slice(0, 400)])),
      el('h3', { text: 'Blocks' }),
      table(['block', 'tier', 'topic', 'hidden', 'claim tokens', 'active'], s.blocks.map((/** @type {any} */ b) => [b.block_id, b.tier, b.topic, b.hidden_count, b.claim_tokens, String(b.active)])),
      el('h3', { text: 'Hidden (compressible) ranges' }),
      table(['start', 'end', 'messages', 'rank tokens', 'tool %'], (surface.result.ranges ?? []).map((/** @type {any} */ r) => [r.start, r.end, r.count, r.rank_tokens, r.tool_pct])),
      el('h3', { text: 'Overflow budgets' }),
      table(['agent', 'recoveries used', 'max'], s.budgets.map((/** @type {any} */ b) => [b.agent_id, b.used, b.max])),
    );
  } catch (e) {
    showError(/** @type {Error} */ (e).message);
  }
}

/**
 * @param {string[]} head
 * @param {Array<Array<string | number>>} rows
 */
function table(head, rows) {
  return el('table', {}, [
    el('thead', {}, [el('tr', {}, head.map((h) => el('th', { text: h })))]),
    el('tbody', {}, rows.length ? rows.map((r) => el('tr', {}, r.map((c) => el('td', { text: c })))) : [el('tr', {}, [el('td', { text: '(none)' })])]),
  ]);
}

// ------------------------------------------------------------------------------------------
// The trace view: GET /api/v1/traces/{id} (retrieve traces, RETRIEVAL_TRACE_ENABLED).

async function runTrace() {
  showError('');
  const out = $('trace-out');
  out.replaceChildren();
  if (!state.trace) return;
  try {
    const { result } = await api('GET', `/api/v1/traces/${encodeURIComponent(state.trace)}`);
    const stages = Array.isArray(result.stages) ? result.stages : [];
    if (stages.length) {
      out.append(el('h3', { text: 'Stages' }), table(['stage', 'status', 'ms'], stages.map((/** @type {any} */ s) => [s.stage ?? s.name ?? '', s.status ?? s.outcome ?? '', s.ms ?? s.duration_ms ?? ''])));
    }
    out.append(el('h3', { text: 'Trace' }), el('pre', { text: JSON.stringify(result, null, 2) }));
  } catch (e) {
    showError(/** @type {Error} */ (e).message);
  }
}

// ------------------------------------------------------------------------------------------

function runView() {
  pushState();
  if (state.view === 'session') void runSession();
  else if (state.view === 'trace') void runTrace();
  else void runQuery();
}

async function main() {
  const res = await fetch('/inspect/config.json');
  config = await res.json();
  $('version').textContent = `${config.name} ${config.version} · auth ${config.auth_mode}`;
  fillForm();
  // Without a key nothing is asked: the key form runs the view once the key is given.
  const needsKey = config.auth_mode === 'api_key' && !sessionStorage.getItem(KEY_STORAGE);
  if (needsKey) showKeyPrompt();
  $('query-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    readForm();
    state.view = 'query';
    runView();
  });
  $('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($('api-key'));
    sessionStorage.setItem(KEY_STORAGE, input.value.trim());
    input.value = '';
    $('key-form').hidden = true;
    runView();
  });
  $('trace-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.trace = /** @type {HTMLInputElement} */ ($('trace-id')).value.trim();
    state.view = 'trace';
    runView();
  });
  for (const v of /** @type {const} */ (['query', 'session', 'trace'])) {
    $(`tab-${v}`).addEventListener('click', () => {
      readForm();
      state.view = v;
      runView();
    });
  }
  pushState();
  if (!needsKey && (state.view !== 'query' || state.q)) runView();
}

void main();
