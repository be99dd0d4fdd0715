/**
 * Prompts of the three model calls: query expansion (context-contract §8.1), digest rewrite
 * (§8.2, variables `query`, `rendered`, `max_bullets`) and retrieve's query rewrite. Written
 * for this project from the contract; each returns the chat messages to send.
 */
import { codePointLength, codePointPrefix, compactFragment, parseCompactBlock } from '@ctxmesh/kernel';

/** One chat message. */
export interface PromptMessage {
  /** Speaker. */
  role: 'system' | 'user' | 'assistant';
  /** Text. */
  content: string;
}

/** Session messages shown to the expansion model: the most recent five (§8.1 "window 5"). */
export const EXPANSION_WINDOW = 5;
/** Code points kept of one session message in the expansion prompt. */
export const EXPANSION_MESSAGE_CHARS = 1000;
/** Code points kept of the archive overview in the expansion prompt. */
export const EXPANSION_OVERVIEW_CHARS = 2000;
/** Extra queries asked of the model (the original plus two makes the contract's three). */
export const EXTRA_QUERIES = 2;

/** A session message as the expansion prompt sees it. */
export interface SessionMessage {
  /** `user` or `assistant` (anything else is shown as given). */
  role: string;
  /** Text. */
  text: string;
}

/** Cut to `n` code points, marking the cut with `…`. */
function clip(s: string, n: number): string {
  return codePointLength(s) <= n ? s : `${codePointPrefix(s, n - 1)}…`;
}

const JSON_ANSWER = `Answer with JSON only, in exactly this form: {"queries": ["first query", "second query"]}`;

/**
 * Expansion prompt: the archive overview and the last {@link EXPANSION_WINDOW} messages,
 * then the query; asks for at most {@link EXTRA_QUERIES} self-contained extra queries as JSON.
 * @param messages session messages, oldest first (only the last five are used)
 */
export function buildExpansionPrompt(query: string, messages: SessionMessage[], archiveOverview: string): PromptMessage[] {
  const recent = messages.slice(-EXPANSION_WINDOW);
  const convo = recent.length
    ? recent.map((m) => `[${m.role || 'user'}] ${clip(m.text.trim(), EXPANSION_MESSAGE_CHARS)}`).join('\n')
    : '(none)';
  const overview = archiveOverview.trim() ? clip(archiveOverview.trim(), EXPANSION_OVERVIEW_CHARS) : '(none)';
  return [
    {
      role: 'system',
      content:
        'You plan searches over the long-term memory of an AI agent (past conversations, notes, documents). ' +
        'You never answer the question itself; you only write search queries.',
    },
    {
      role: 'user',
      content:
        `Summary of the earlier session:\n${overview}\n\n` +
        `Recent messages (oldest first):\n${convo}\n\n` +
        `Current query: ${query}\n\n` +
        `Write at most ${EXTRA_QUERIES} additional search queries that would find memories relevant to the current query ` +
        'in the light of this conversation. Make each query self-contained: replace pronouns and vague references ' +
        '("it", "that bug", "the same as before") with what they refer to, and name the specific projects, files, ' +
        'people or topics involved. Do not repeat the current query. Write in the language of the current query.\n' +
        `${JSON_ANSWER}\nIf the current query is already self-contained, answer {"queries": []}`,
    },
  ];
}

/** A served entry (URI and text), for a context block when no rendered block was sent. */
export interface SourceText {
  /** Entry URI. */
  uri: string;
  /** Entry text. */
  text: string;
}

/**
 * The context shown to the digest model: `rendered` as is, or, when it is blank, the
 * entries as `<memory uri="…">text</memory>` blocks so the model still sees the URIs to cite.
 * An evidence block with groups (context-contract §10.6) is shown with every URI in full, so
 * the model copies citations the allowlist knows, not names relative to a group's base.
 */
export function digestContext(rendered: string, sources: SourceText[]): string {
  if (rendered.trim()) {
    if (!rendered.includes('<memories base="')) return rendered;
    try {
      return parseCompactBlock(rendered)
        .entries.map((e) => compactFragment(e, e.uri))
        .join('\n');
    } catch {
      return rendered;
    }
  }
  return sources.map((s) => `<memory uri="${s.uri}">\n${s.text}\n</memory>`).join('\n');
}

/**
 * Digest rewrite prompt (§8.2): at most `maxBullets` bullets, each `- …` ending with
 * `source: viking://…` (or `来源：viking://…`) copied verbatim from the context, or exactly
 * `NO_RELEVANT_MEMORY`.
 * @param maxBullets bullet limit, already `max(1, rewrite_max_bullets)`
 */
export function buildDigestPrompt(query: string, rendered: string, maxBullets: number): PromptMessage[] {
  return [
    {
      role: 'system',
      content:
        'You condense retrieved memory into a short cited digest for an AI agent. ' +
        'You only restate what the retrieved context says, and you cite where each fact came from.',
    },
    {
      role: 'user',
      content:
        `Query: ${query}\n\n` +
        `Retrieved context (each <memory> element carries its uri):\n${rendered}\n\n` +
        `Write at most ${maxBullets} bullet${maxBullets === 1 ? '' : 's'} with the facts from the context that help with the query.\n` +
        'Rules:\n' +
        '- Each bullet is one line and starts with "- ".\n' +
        '- Each bullet ends with its source, written as "source: <uri>" (or "来源：<uri>" when you write Chinese), ' +
        'where <uri> is copied character for character from the uri attribute of the <memory> element the fact came from. ' +
        'Never invent, shorten or change a uri.\n' +
        '- Use only facts stated in the context; most relevant first; write in the language of the query.\n' +
        '- No heading, no introduction, no closing remark.\n' +
        'If nothing in the context is relevant to the query, answer exactly NO_RELEVANT_MEMORY and nothing else.',
    },
  ];
}

/**
 * Retrieve's query-rewrite prompt: at most {@link EXTRA_QUERIES} alternative search queries
 * (keyword-friendly rewordings, expanded abbreviations, the parts of a compound question) as JSON.
 */
export function buildQueryRewritePrompt(query: string): PromptMessage[] {
  return [
    {
      role: 'system',
      content: 'You rewrite search queries for a retrieval system that combines keyword and semantic search. You never answer the query.',
    },
    {
      role: 'user',
      content:
        `Query: ${query}\n\n` +
        `Write at most ${EXTRA_QUERIES} alternative search queries that would find the documents this query is looking for: ` +
        'use the words such documents are likely to contain, expand abbreviations, and split a compound question into its parts. ' +
        'Keep the language of the query. Do not repeat the query.\n' +
        `${JSON_ANSWER}\nIf the query cannot be improved, answer {"queries": []}`,
    },
  ];
}
