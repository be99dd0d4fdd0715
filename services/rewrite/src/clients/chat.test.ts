import { ProviderResponseError } from '@ctxmesh/provider';
import { ChatClient, parseChatCompletion, stripReasoning } from './chat';

describe('parseChatCompletion', () => {
  it('reads the first choice, its finish reason and the usage', () => {
    expect(
      parseChatCompletion({
        choices: [
          { index: 0, message: { role: 'assistant', content: '- a' }, finish_reason: 'length' },
          { index: 1, message: { role: 'assistant', content: 'ignored' } },
        ],
        usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
      }),
    ).toEqual({ content: '- a', usage: { promptTokens: 12, completionTokens: 3 }, finishReason: 'length' });
  });

  it('joins text parts of an array content', () => {
    const out = parseChatCompletion({ choices: [{ message: { content: [{ type: 'text', text: '- a' }, { type: 'text', text: ' b' }] } }] });
    expect(out.content).toBe('- a b');
  });

  it('drops a usage with a missing or invalid count, and truncates fractional counts', () => {
    expect(parseChatCompletion({ choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: 3 } }).usage).toBeNull();
    expect(parseChatCompletion({ choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: -1, completion_tokens: 2 } }).usage).toBeNull();
    expect(parseChatCompletion({ choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: 3.9, completion_tokens: 2 } }).usage).toEqual({
      promptTokens: 3,
      completionTokens: 2,
    });
  });

  it.each([
    ['a non-object', 'hello'],
    ['an array', []],
    ['no choices', { object: 'chat.completion' }],
    ['empty choices', { choices: [] }],
    ['null content', { choices: [{ message: { content: null } }] }],
    ['a content array without text', { choices: [{ message: { content: [{ type: 'image_url' }] } }] }],
  ])('rejects %s', (_name, body) => {
    expect(() => parseChatCompletion(body)).toThrow(ProviderResponseError);
  });
});

describe('ChatClient.requestBody', () => {
  it('is exactly model, messages, temperature 0 and stream false', () => {
    const c = new ChatClient({ url: 'http://x/v1/chat/completions', apiKey: '', model: 'm' });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    expect(c.requestBody(messages)).toEqual({ model: 'm', messages, temperature: 0, stream: false });
  });
});

describe('stripReasoning', () => {
  it('removes complete reasoning blocks at the start only', () => {
    expect(stripReasoning('<think>\n- draft source: viking://x\n</think>\n\nNO_RELEVANT_MEMORY')).toBe('NO_RELEVANT_MEMORY');
    expect(stripReasoning('<think>a</think><THINKING>b</THINKING>- kept')).toBe('- kept');
    expect(stripReasoning('- kept <think>not leading</think>')).toBe('- kept <think>not leading</think>');
    expect(stripReasoning('<think>never closed\n- draft')).toBe('<think>never closed\n- draft');
  });

  it('applies to parsed completions', () => {
    expect(parseChatCompletion({ choices: [{ message: { content: '<think>hmm</think>\n{"queries": []}' } }] }).content).toBe('{"queries": []}');
  });
});
