/**
 * OpenAI-compatible chat completions (`POST …/chat/completions`, non-streaming) with plain
 * fetch: OpenAI, vLLM, Ollama, llama.cpp, LiteLLM and most hosted gateways speak it.
 */
import type { ChatEndpoint } from '../config';
import type { PromptMessage } from '../domain/prompts';
import { postJson, ProviderResponseError } from '@ctxmesh/provider';

/** One chat message (the prompts' type). */
export type ChatMessage = PromptMessage;

/** Token usage as the provider reported it. */
export interface ChatUsage {
  /** Prompt tokens. */
  promptTokens: number;
  /** Completion tokens. */
  completionTokens: number;
}

/** A parsed completion. */
export interface ChatCompletion {
  /** Text of the first choice, without a leading reasoning block (see {@link stripReasoning}). */
  content: string;
  /** Usage, or null when the provider sent none (or an unusable one). */
  usage: ChatUsage | null;
  /** `finish_reason` of the first choice (`stop`, `length`…), or null. */
  finishReason: string | null;
}

/** Per-call options of {@link ChatClient.complete}. */
export interface ChatCallOptions {
  /** Fuse in ms. */
  timeoutMs: number;
  /** Caller's signal (deadline, cancel). */
  signal?: AbortSignal;
}

/**
 * Sampling temperature of every request: 0, because expansion and digests should be as
 * repeatable as the provider allows (a digest is a compression, not a creative text).
 */
export const CHAT_TEMPERATURE = 0;

const INT32_MAX = 2_147_483_647;

const LEADING_REASONING = /^\s*<(think|thinking|reasoning)>[\s\S]*?<\/\1>\s*/i;

/**
 * The answer without the reasoning trace some open models put before it in the content
 * (`<think>…</think>`, as DeepSeek-R1 or Qwen3 served by vLLM/Ollama do). Without this, bullets
 * drafted while reasoning could reach the digest, and a final `NO_RELEVANT_MEMORY` would not be
 * the whole output. Only complete blocks at the very start are removed; nothing else changes.
 */
export function stripReasoning(content: string): string {
  let out = content;
  for (let m = LEADING_REASONING.exec(out); m; m = LEADING_REASONING.exec(out)) out = out.slice(m[0].length);
  return out;
}

function tokenCount(v: unknown): number | null {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return null;
  return Math.min(INT32_MAX, Math.trunc(v));
}

/**
 * Parse a chat-completions response body.
 * Content may be a string or (some gateways) an array of `{type:"text", text}` parts.
 * @throws ProviderResponseError when there is no first choice or no text content
 */
export function parseChatCompletion(body: unknown): ChatCompletion {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ProviderResponseError('body is not an object');
  const b = body as { choices?: unknown; usage?: unknown };
  if (!Array.isArray(b.choices) || b.choices.length === 0) throw new ProviderResponseError('no choices');
  const first = b.choices[0] as { message?: { content?: unknown }; finish_reason?: unknown } | null;
  const raw = first?.message?.content;
  let content: string;
  if (typeof raw === 'string') content = stripReasoning(raw);
  else if (Array.isArray(raw)) {
    const parts = raw.filter((p): p is { text: string } => !!p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string');
    if (parts.length === 0) throw new ProviderResponseError('choice has no text content');
    content = stripReasoning(parts.map((p) => p.text).join(''));
  } else throw new ProviderResponseError('choice has no text content');
  let usage: ChatUsage | null = null;
  if (b.usage && typeof b.usage === 'object') {
    const u = b.usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
    const p = tokenCount(u.prompt_tokens);
    const c = tokenCount(u.completion_tokens);
    if (p !== null && c !== null) usage = { promptTokens: p, completionTokens: c };
  }
  const finishReason = typeof first?.finish_reason === 'string' ? first.finish_reason : null;
  return { content, usage, finishReason };
}

/** A client of one chat endpoint and model. */
export class ChatClient {
  constructor(
    /** Endpoint, key and model. */
    readonly endpoint: ChatEndpoint,
    private readonly fetchImpl?: typeof fetch,
  ) {}

  /** The exact request body sent for `messages`: `{model, messages, temperature: 0, stream: false}`. */
  requestBody(messages: ChatMessage[]): { model: string; messages: ChatMessage[]; temperature: number; stream: false } {
    return { model: this.endpoint.model, messages, temperature: CHAT_TEMPERATURE, stream: false };
  }

  /**
   * One completion: exactly one HTTP request, no retries (the fuse is the whole allowance).
   * @throws ProviderError subclasses (see `postJson` and {@link parseChatCompletion})
   */
  async complete(messages: ChatMessage[], opts: ChatCallOptions): Promise<ChatCompletion> {
    const body = await postJson({
      url: this.endpoint.url,
      apiKey: this.endpoint.apiKey,
      body: this.requestBody(messages),
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      fetch: this.fetchImpl,
    });
    return parseChatCompletion(body);
  }
}
