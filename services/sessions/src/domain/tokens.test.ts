import { claimTokensOf, countRankTokens, defaultRankEstimator } from './tokens';

describe('countRankTokens', () => {
  it('counts one token per CJK character and one per four other characters', () => {
    expect(countRankTokens('')).toBe(0);
    expect(countRankTokens('abcd')).toBe(1);
    expect(countRankTokens('abcde')).toBe(2);
    expect(countRankTokens('上下文')).toBe(3);
    expect(countRankTokens('上下文 window')).toBe(3 + 2);
    expect(countRankTokens('カタカナ한국어')).toBe(7);
    expect(countRankTokens('𠀀x')).toBe(2);
  });
});

describe('defaultRankEstimator', () => {
  it('prices media by their structural size', () => {
    const img = { type: 'image' as const, mimeType: 'image/png' };
    expect(defaultRankEstimator.mediaPrice(img)).toBe(4 + Math.ceil(JSON.stringify(img).length / 4));
  });
});

describe('claimTokensOf', () => {
  it('prices text blocks ceil(len/4)+4 plus 4 per message', () => {
    expect(claimTokensOf({ type: 'user/message', content: [{ type: 'text', text: 'abcdefgh' }] })).toBe(4 + 2 + 4);
    expect(claimTokensOf({ type: 'user/message', content: [{ type: 'text', text: '上下文' }] })).toBe(4 + 1 + 4);
  });

  it('prices tool calls ceil(name/4)+ceil(args/4)+4 and other blocks 4+ceil(json/4)', () => {
    const call = { type: 'tool-call' as const, callId: 'c', name: 'read_file', args: { path: '/a' } };
    const args = JSON.stringify(call.args);
    expect(claimTokensOf({ type: 'assistant/message', content: [call] })).toBe(4 + Math.ceil(9 / 4) + Math.ceil(args.length / 4) + 4);
    const file = { type: 'file' as const, name: 'x.txt' };
    expect(claimTokensOf({ type: 'tool/result', callId: 'c', content: [file] })).toBe(4 + 4 + Math.ceil(JSON.stringify(file).length / 4));
  });

  it('prices events that never reach the surface at zero', () => {
    expect(claimTokensOf({ type: 'turn/start', turn: 1 })).toBe(0);
    expect(claimTokensOf({ type: 'compaction/end', compactionId: 'x', turn: null })).toBe(0);
  });
});
