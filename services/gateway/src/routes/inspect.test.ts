/** The inspector's pure helpers (`services/gateway/inspect/view.js`, a browser ES module). */
type Row = { uri: string; tier: string | null; reason: string; tokens: Record<string, number | null>; cooled_turn?: number };
interface View {
  DEFAULTS: Record<string, string>;
  stateFromQuery(search: string): Record<string, string>;
  queryFromState(state: Record<string, string>): string;
  contextBody(state: Record<string, string>): Record<string, unknown>;
  budgetSegments(entries: Array<{ uri: string; detail: string }>, rows: Row[], account?: { used_tokens: number; entries: Array<{ uri: string; text_tokens: number; markup_tokens: number }> } | null): Array<{ kind: string; tokens: number; uri?: string }>;
  timeline(stages: Array<{ stage: string; outcome: string; start_ms: number; ms: number }>): Array<{ left: number; width: number }>;
  reasonText(row: Row): string;
}
// A plain browser module, typed above.
const view = require('../../inspect/view.js') as View;

describe('inspector view helpers', () => {
  it('round-trips the page state through the URL, leaving defaults out', () => {
    const state = { ...view.stateFromQuery(''), q: 'roll back', session: 's 1', dedup_turns: '5' };
    const qs = view.queryFromState(state);
    expect(qs).toBe('?q=roll+back&session=s+1&dedup_turns=5');
    expect(view.stateFromQuery(qs)).toEqual(state);
    expect(view.queryFromState(view.stateFromQuery('?bogus=1'))).toBe('');
  });

  it('sends explain and telemetry always, optional fields only when set', () => {
    expect(view.contextBody(view.stateFromQuery('?q=x'))).toEqual({ query: 'x', mode: 'context', max_tokens: 1600, explain: true, telemetry: true });
    expect(view.contextBody(view.stateFromQuery('?q=x&session=s&dedup_turns=3&purpose=coding&detail=full&tokenizer=o200k_base&packing=evidence&limit=20'))).toEqual({
      query: 'x', mode: 'context', max_tokens: 1600, explain: true, telemetry: true, session_id: 's', purpose: 'coding', detail: 'full', packing: 'evidence', tokenizer: 'o200k_base', dedup_turns: 3, limit: 20,
    });
  });

  it('makes one segment per entry at its served tier, a separator between, summing to used tokens', () => {
    const rows: Row[] = [
      { uri: 'a', tier: 'abstract', reason: 'served', tokens: { uri: 10, abstract: 40, overview: 90, full: null } },
      { uri: 'x', tier: null, reason: 'budget', tokens: { uri: 12, abstract: 400, overview: null, full: null } },
      { uri: 'b', tier: 'full', reason: 'served', tokens: { uri: 9, abstract: 20, overview: null, full: 70 } },
    ];
    const segs = view.budgetSegments([{ uri: 'a', detail: 'abstract' }, { uri: 'b', detail: 'full' }], rows);
    expect(segs).toEqual([
      { kind: 'entry', index: 0, uri: 'a', tier: 'abstract', tokens: 40 },
      { kind: 'separator', tokens: 1 },
      { kind: 'entry', index: 1, uri: 'b', tier: 'full', tokens: 70 },
    ]);
    expect(() => view.budgetSegments([{ uri: 'x', detail: 'abstract' }], rows)).toThrow(/no served row/);
  });

  it('sizes entries by the token account when explain has one, group lines and separators in one segment', () => {
    const account = { used_tokens: 100, entries: [{ uri: 'b', text_tokens: 30, markup_tokens: 5 }, { uri: 'a', text_tokens: 40, markup_tokens: 6 }] };
    const segs = view.budgetSegments([{ uri: 'a', detail: 'abstract' }, { uri: 'b', detail: 'full' }], [], account);
    expect(segs).toEqual([
      { kind: 'entry', index: 0, uri: 'a', tier: 'abstract', tokens: 46 },
      { kind: 'entry', index: 1, uri: 'b', tier: 'full', tokens: 35 },
      { kind: 'separator', tokens: 19 },
    ]);
    expect(segs.reduce((n, x) => n + x.tokens, 0)).toBe(100);
    expect(() => view.budgetSegments([{ uri: 'z', detail: 'abstract' }], [], account)).toThrow(/token account/);
  });

  it('lays stages on one time line and names a cooled URI with its turn', () => {
    const t = view.timeline([
      { stage: 'ledger', outcome: 'ok', start_ms: 0, ms: 2 },
      { stage: 'gather', outcome: 'ok', start_ms: 2, ms: 6 },
    ]);
    expect(t.map((s) => [s.left, s.width])).toEqual([[0, 25], [25, 75]]);
    expect(view.reasonText({ uri: 'u', tier: null, reason: 'cooled', tokens: {}, cooled_turn: 3 })).toBe('cooled (served turn 3)');
    expect(view.reasonText({ uri: 'u', tier: null, reason: 'below_threshold', tokens: {} })).toBe('below threshold');
  });
});
