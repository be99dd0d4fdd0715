/** Session capture on the wire: `AppendMessages` and the `result` of a capture call. */
import type { sessions } from '@ctxmesh/proto';
import type { Caller, CapturedMessage } from '../domain';
import { protoIdentity } from './identity';

/** `result` of a capture call. */
export interface AppendResultJson {
  session_id: string;
  /** Messages in the session after the call. */
  message_count: number;
  /** Sequence numbers assigned to the appended messages. */
  seqs: number[];
}

/** The `AppendMessages` request of validated messages. */
export function toAppendMessagesRequest(caller: Caller, sessionId: string, messages: readonly CapturedMessage[]): sessions.AppendMessagesRequest {
  return { identity: protoIdentity(caller), sessionId, messages: messages.map((m) => ({ role: m.role, content: m.content })) };
}

/** The sessions service's answer as the capture `result`. */
export function appendResultJson(sessionId: string, res: sessions.AppendMessagesResponse): AppendResultJson {
  return { session_id: sessionId, message_count: res.messageCount, seqs: [...res.seqs] };
}
