/**
 * Text projection of blocks and the provenance texts of §1.6: the model-written frame, the
 * engine marker, and `withSummaryFramePrefix`, the ONLY function that adds the frame. The
 * exemption for engine-written markers is decided by the text's content, never by a caller's
 * flag, so the durable summary, the checkpoint node, the projected text and the Decompress
 * header are the same bytes by construction.
 */
import type { AssistantBlock, ContentBlock, FileBlock, ImageBlock, MessageEvent, ToolCallBlock } from './events';

/** First line of every model- or human-written summary (exactly once). */
export const SUMMARY_FRAME_PREFIX = '[Model-written summary — not user words; re-verify any obligations before relying on them]';

/** Lead of every engine-written marker. */
export const ENGINE_SUMMARY_LEAD = '[engine-written summary — context-overflow emergency compaction';

/** Topic of overflow-recovery blocks. */
export const OVERFLOW_TOPIC = 'context-overflow recovery';

/** True when `text` is an engine-written marker (starts with {@link ENGINE_SUMMARY_LEAD}). */
export function isEngineWrittenSummary(text: string): boolean {
  return text.startsWith(ENGINE_SUMMARY_LEAD);
}

/**
 * Frame a summary as model-written: prepend {@link SUMMARY_FRAME_PREFIX} and a newline.
 * Idempotent (text already starting with the frame is returned unchanged) and exempts
 * engine-written markers by content.
 */
export function withSummaryFramePrefix(text: string): string {
  if (text.startsWith(SUMMARY_FRAME_PREFIX) || isEngineWrittenSummary(text)) return text;
  return `${SUMMARY_FRAME_PREFIX}\n${text}`;
}

/**
 * The engine marker of an overflow recovery (§1.6 template, one line).
 * @param hiddenCount the true number of surface messages hidden (`shadowedSeqs.length`)
 */
export function overflowMarkerSummary(hiddenCount: number): string {
  return (
    `${ENGINE_SUMMARY_LEAD}: ${hiddenCount} surface message(s) hidden because the provider rejected the request ` +
    'as exceeding the context window. The originals are intact in the session log — use search_context or ' +
    'decompress (see acp_status) to read them, or re-run the compress tool over this range to write a proper summary.]'
  );
}

/** Human-readable size: `512B`, `4.2KB`, `1.5MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}KB`;
  return `${(n / (1024 * 1024)).toFixed(1)}MB`;
}

/** Fixed placeholder of an image block, e.g. `[image image/png shot.png 800x600 4.2KB]`. */
export function imagePlaceholder(b: ImageBlock): string {
  const parts = ['image', b.mimeType];
  if (b.name) parts.push(b.name);
  if (b.width !== undefined && b.height !== undefined) parts.push(`${b.width}x${b.height}`);
  if (b.sizeBytes !== undefined) parts.push(formatBytes(b.sizeBytes));
  return `[${parts.join(' ')}]`;
}

/** Fixed placeholder of a file block, e.g. `[file notes.txt 1.0KB]`. */
export function filePlaceholder(b: FileBlock): string {
  const parts = ['file', b.name];
  if (b.sizeBytes !== undefined) parts.push(formatBytes(b.sizeBytes));
  return `[${parts.join(' ')}]`;
}

/** JSON text of a tool call's arguments (absent arguments are `{}`). */
export function toolArgsJson(call: ToolCallBlock): string {
  return JSON.stringify(call.args ?? {});
}

/** Text of one content block; media become their placeholders. */
export function blockText(b: ContentBlock): string {
  switch (b.type) {
    case 'text':
      return b.text;
    case 'image':
      return imagePlaceholder(b);
    case 'file':
      return filePlaceholder(b);
  }
}

/** Text of the non-call blocks of a message, joined by newlines. */
export function contentText(blocks: readonly AssistantBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) if (b.type !== 'tool-call') parts.push(blockText(b));
  return parts.join('\n');
}

/**
 * The whole text of a message node as the estimators, search and Decompress see it: content
 * text, then one `[tool-call <name> <args>]` line per call. A checkpoint passes through
 * {@link withSummaryFramePrefix} (the projection-time safety net of §1.6).
 * @param checkpoint true when the event is a checkpoint node
 */
export function nodeText(e: MessageEvent, checkpoint: boolean): string {
  const text = contentText(e.content);
  if (checkpoint) return withSummaryFramePrefix(text);
  if (e.type !== 'assistant/message') return text;
  const lines = text === '' ? [] : [text];
  for (const b of e.content) if (b.type === 'tool-call') lines.push(`[tool-call ${b.name} ${toolArgsJson(b)}]`);
  return lines.join('\n');
}
