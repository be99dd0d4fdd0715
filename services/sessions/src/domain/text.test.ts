import {
  ENGINE_SUMMARY_LEAD,
  filePlaceholder,
  imagePlaceholder,
  isEngineWrittenSummary,
  nodeText,
  overflowMarkerSummary,
  SUMMARY_FRAME_PREFIX,
  withSummaryFramePrefix,
} from './text';

describe('withSummaryFramePrefix', () => {
  it('pins the frame literal', () => {
    expect(SUMMARY_FRAME_PREFIX).toBe('[Model-written summary — not user words; re-verify any obligations before relying on them]');
  });

  it('adds the frame as the first line exactly once, however often it is applied', () => {
    const once = withSummaryFramePrefix('We refactored the parser.');
    expect(once).toBe(`${SUMMARY_FRAME_PREFIX}\nWe refactored the parser.`);
    expect(withSummaryFramePrefix(withSummaryFramePrefix(once))).toBe(once);
    expect(once.split(SUMMARY_FRAME_PREFIX)).toHaveLength(2);
  });

  it('exempts engine-written markers by content', () => {
    const marker = overflowMarkerSummary(4);
    expect(isEngineWrittenSummary(marker)).toBe(true);
    expect(withSummaryFramePrefix(marker)).toBe(marker);
  });

  it('frames text that merely mentions the lead later on', () => {
    const t = `note: ${ENGINE_SUMMARY_LEAD}`;
    expect(withSummaryFramePrefix(t).startsWith(SUMMARY_FRAME_PREFIX)).toBe(true);
  });
});

describe('overflowMarkerSummary', () => {
  it('renders the §1.6 template on one line with the true count', () => {
    expect(overflowMarkerSummary(7)).toBe(
      '[engine-written summary — context-overflow emergency compaction: 7 surface message(s) hidden because the provider ' +
        'rejected the request as exceeding the context window. The originals are intact in the session log — use ' +
        'search_context or decompress (see acp_status) to read them, or re-run the compress tool over this range to write a proper summary.]',
    );
    expect(overflowMarkerSummary(7)).not.toContain('\n');
    expect(overflowMarkerSummary(7)).not.toContain(SUMMARY_FRAME_PREFIX);
  });
});

describe('placeholders', () => {
  it('renders images and files as fixed placeholders', () => {
    expect(imagePlaceholder({ type: 'image', mimeType: 'image/png', name: 'shot.png', width: 800, height: 600, sizeBytes: 4300 })).toBe(
      '[image image/png shot.png 800x600 4.2KB]',
    );
    expect(imagePlaceholder({ type: 'image', mimeType: 'image/jpeg' })).toBe('[image image/jpeg]');
    expect(filePlaceholder({ type: 'file', name: 'notes.txt', sizeBytes: 1024 })).toBe('[file notes.txt 1.0KB]');
    expect(filePlaceholder({ type: 'file', name: 'big.bin', sizeBytes: 3 * 1024 * 1024 })).toBe('[file big.bin 3.0MB]');
    expect(filePlaceholder({ type: 'file', name: 'tiny', sizeBytes: 12 })).toBe('[file tiny 12B]');
  });

  it('projects media inside node text', () => {
    const t = nodeText({ type: 'user/message', content: [{ type: 'text', text: 'look' }, { type: 'file', name: 'a.txt', sizeBytes: 2048 }] }, false);
    expect(t).toBe('look\n[file a.txt 2.0KB]');
  });

  it('frames checkpoint node text and lists tool calls of assistant nodes', () => {
    expect(nodeText({ type: 'user/message', content: [{ type: 'text', text: 'sum' }] }, true)).toBe(`${SUMMARY_FRAME_PREFIX}\nsum`);
    expect(
      nodeText({ type: 'assistant/message', content: [{ type: 'text', text: 'ok' }, { type: 'tool-call', callId: 'c', name: 'grep', args: { q: 1 } }] }, false),
    ).toBe('ok\n[tool-call grep {"q":1}]');
  });
});
