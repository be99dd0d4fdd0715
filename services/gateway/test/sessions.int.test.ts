/** Session capture routes over a real gRPC fake of the sessions service. */
import { Code, CtxError } from '@ctxmesh/rpc';
import { harness, untilAborted, type Harness } from './fakes';

let h: Harness;
beforeAll(async () => {
  h = await harness({ auth: { mode: 'api_key', keys: { k1: { accountId: 'acme', userId: 'alice' } } } });
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.sess.script = {};
  h.sess.append.length = 0;
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', 'x-api-key': 'k1', ...headers }, payload: JSON.stringify(body) });

describe('POST /api/v1/sessions/{id}/messages', () => {
  it('POST /api/v1/sessions/{id}/messages - one user message - 200 with the count, AppendMessages called', async () => {
    const res = await post('/api/v1/sessions/cc-s1/messages', { role: 'user', content: 'what did we deploy?' }, { 'x-request-id': 'cap-1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: { session_id: 'cc-s1', message_count: 1, seqs: [0] } });
    expect(h.sess.append[0]).toMatchObject({
      requestId: 'cap-1',
      req: { identity: { accountId: 'acme', userId: 'alice', requestId: 'cap-1' }, sessionId: 'cc-s1', messages: [{ role: 'user', content: 'what did we deploy?' }] },
    });
  });

  it('POST /api/v1/sessions/{id}/messages - bad role - 400 validation envelope, no call', async () => {
    const res = await post('/api/v1/sessions/cc-s1/messages', { role: 'tool', content: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_ARGUMENT', message: "Invalid request parameters: body.role: Input should be 'user' or 'assistant'" });
    expect(h.sess.append).toHaveLength(0);
  });

  it('POST /api/v1/sessions/{id}/messages - blank content - 400', async () => {
    const res = await post('/api/v1/sessions/cc-s1/messages', { role: 'assistant', content: '   ' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.validation_errors[0]).toMatchObject({ loc: ['body', 'content'], type: 'value_error' });
  });

  it('POST /api/v1/sessions/{id}/messages - invalid session id - 400 INVALID_ARGUMENT', async () => {
    const res = await post('/api/v1/sessions/bad%20id/messages', { role: 'user', content: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_ARGUMENT', details: {} });
  });

  it('POST /api/v1/sessions/{id}/messages - no key - 401', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/sessions/cc-s1/messages', payload: { role: 'user', content: 'x' } });
    expect(res.statusCode).toBe(401);
  });

  it('POST /api/v1/sessions/{id}/messages - sessions rejects the input - 400 passed through', async () => {
    h.sess.script.appendMessages = async () => {
      throw new CtxError(Code.INVALID_ARGUMENT, 'MESSAGE_TOO_LARGE', 'message exceeds 1 MiB');
    };
    const res = await post('/api/v1/sessions/cc-s1/messages', { role: 'user', content: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'message exceeds 1 MiB' });
  });

  it('POST /api/v1/sessions/{id}/messages - sessions outlives the budget - 504', async () => {
    h.sess.script.appendMessages = (_req, ctx) => untilAborted(ctx);
    const res = await post('/api/v1/sessions/cc-s1/messages', { role: 'user', content: 'x' }, { 'x-request-timeout-ms': '200' });
    expect(res.statusCode).toBe(504);
    expect(res.json().error).toMatchObject({ code: 'DEADLINE_EXCEEDED', details: { domain: 'sessions' } });
  });
});

describe('POST /api/v1/sessions/{id}/messages/batch', () => {
  it('POST /api/v1/sessions/{id}/messages/batch - two messages - 200, order kept', async () => {
    const res = await post('/api/v1/sessions/cc-b1/messages/batch', { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toEqual({ session_id: 'cc-b1', message_count: 2, seqs: [0, 1] });
    expect(h.sess.append[0].req.messages).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ]);
  });

  it('POST /api/v1/sessions/{id}/messages/batch - one bad item - 400 naming its index, no call', async () => {
    const res = await post('/api/v1/sessions/cc-b1/messages/batch', { messages: [{ role: 'user', content: 'q' }, { role: 'user' }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('Invalid request parameters: body.messages.1.content: Field required');
    expect(h.sess.append).toHaveLength(0);
  });
});
