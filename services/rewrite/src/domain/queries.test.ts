import { mergeQueries, parsePlannedQueries } from './queries';

describe('parsePlannedQueries', () => {
  it.each([
    ['a JSON object with queries', '{"queries": ["a", "b"]}', ['a', 'b']],
    ['a fenced JSON block', '```json\n{"queries": ["a", "b"]}\n```', ['a', 'b']],
    ['JSON after prose', 'Sure! {"queries": ["a"]} Hope this helps.', ['a']],
    ['a bare JSON array', '["a", "b"]', ['a', 'b']],
    ['objects with a query field', '{"queries": [{"query": "a", "intent": "x"}, {"text": "b"}, {"q": "c"}, 7]}', ['a', 'b', 'c']],
    ['an OpenViking-style query plan', '{"reasoning": "r", "query_plan": {"queries": [{"query": "a", "priority": 1}]}}', ['a']],
    ['planned_queries', '{"planned_queries": ["a"]}', ['a']],
    ['an empty plan', '{"queries": []}', []],
    ['a numbered list under a label', 'Queries:\n1. first one\n2) second one', ['first one', 'second one']],
    ['a bullet list with quotes', '- "first one"\n* “second one”', ['first one', 'second one']],
    ['plain lines', 'first one\nsecond one', ['first one', 'second one']],
    ['labelled lines', 'Query 1: first one\nQuery 2: second one', ['first one', 'second one']],
    ['a Chinese numbered list', '1、部署失败 修复\n2、回滚 命令', ['部署失败 修复', '回滚 命令']],
    ['only list items when a list is present', 'Here you go\n- first one\n- second one\nThese should help.', ['first one', 'second one']],
    ['nothing', '   ', []],
  ])('reads %s', (_name, content, want) => {
    expect(parsePlannedQueries(content)).toEqual(want);
  });
});

describe('mergeQueries', () => {
  it('puts the original first, trims, drops blanks and repeats, and stops at three', () => {
    expect(mergeQueries('orig', ['  a ', '', 'orig', 'a', ' b', 'c'])).toEqual(['orig', 'a', 'b']);
  });

  it('keeps the original alone when nothing new was planned', () => {
    expect(mergeQueries('orig', ['orig', '  '])).toEqual(['orig']);
  });

  it('honours a smaller limit', () => {
    expect(mergeQueries('orig', ['a', 'b'], 2)).toEqual(['orig', 'a']);
  });

  it('keeps the original as sent, even when it has surrounding spaces', () => {
    expect(mergeQueries(' orig ', ['orig'])).toEqual([' orig ', 'orig']);
  });
});
