import { isAgentId, isSessionId, messageId, parseSeqText, SESSION_ID_RULE, WORKSPACE_SLUG } from './session-ids';

describe('parseSeqText', () => {
  it.each([
    ['295', 295],
    ['0', 0],
    ['  7', 7],
    ['0295', 295],
    ['295#call_1', 295],
    ['295#', 295],
    ['4#c#0', 4],
  ])('reads %j as %d', (text, seq) => {
    expect(parseSeqText(text)).toBe(seq);
  });

  it.each(['', ' ', '-1', '+3', '1.5', '1e3', '295 ', 'abc', '#295', 'c#295', '99999999999999999999', '1\n#x'])('rejects %j', (text) => {
    expect(parseSeqText(text)).toBeUndefined();
  });

  it('reads back every id messageId writes', () => {
    for (const [seq, callId] of [[0, undefined], [295, 'toolu_01'], [12, 'a#b'], [3, '']] as const) {
      expect(parseSeqText(messageId(seq, callId))).toBe(seq);
    }
    expect(messageId(295)).toBe('295');
    expect(messageId(295, 'callId')).toBe('295#callId');
  });
});

describe('isSessionId', () => {
  it.each(['cc-3f2a', 'a', 'user@host:1', 'x.y_z', 'a'.repeat(256), '...'])('accepts %j', (id) => {
    expect(isSessionId(id)).toBe(true);
  });

  it.each(['', '.', '..', 'a/b', 'a b', 'é', 'a'.repeat(257)])('rejects %j', (id) => {
    expect(isSessionId(id)).toBe(false);
  });
});

describe('isAgentId', () => {
  it('uses the session id characters, dot segments included', () => {
    expect(isAgentId('agent-1')).toBe(true);
    expect(isAgentId('.')).toBe(true);
    expect(isAgentId('a/b')).toBe(false);
    expect(isAgentId('')).toBe(false);
    expect(SESSION_ID_RULE).toBe("use 1 to 256 letters, digits, '_', '.', '@', ':' or '-'");
  });
});

describe('WORKSPACE_SLUG', () => {
  it('takes 1 to 64 of [A-Za-z0-9._-] starting with a letter or digit', () => {
    for (const ok of ['proj', 'team-a', 'a.b_c', '0', 'a'.repeat(64)]) expect(WORKSPACE_SLUG.test(ok)).toBe(true);
    for (const bad of ['', '-a', '.a', '../x', 'a b', 'a'.repeat(65)]) expect(WORKSPACE_SLUG.test(bad)).toBe(false);
  });
});
