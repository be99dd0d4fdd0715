/** RewriteService.RewriteDigest: context-contract §8.2, with an extractive digest when no model is configured. */
import { normalizeDigest } from '@ctxmesh/kernel';
import type { rewrite } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { extractiveDigest } from '../domain/extractive';
import { fuseMs } from '../domain/fuse';
import { buildDigestPrompt, digestContext } from '../domain/prompts';
import { failureOf, type HandlerDeps } from './deps';

/** Bullets when the caller sent `max_bullets: 0` (proto "unset"); the contract's default. */
export const DEFAULT_MAX_BULLETS = 6;

/**
 * RewriteDigest. The citation allowlist is `served_uris` (or, when empty, the sources'
 * URIs); with nothing served the answer is `off` (§8.2: a rewrite runs only with entries).
 *
 * With a model (`engine: "model"`): the §8.2 prompt over `rendered` (or the sources when it
 * is blank) and `max_bullets` = max(1, `max_bullets`), one call under min(rewrite fuse,
 * `timeout_ms`, the call's deadline), normalised by the kernel's `normalizeDigest` → `ok`,
 * `no_relevant` or `failed`, with the provider's usage (one call happened); the call itself
 * failing → `failed`, its fuse or deadline → `timeout`, both without usage.
 *
 * Without a model: `off` when `only_if_model`, else the extractive digest (`engine:
 * "extractive"`, no usage) → `ok`, or `failed` when no sentence scored above the floor.
 * Never `no_relevant`: that status blanks `rendered` (§8.2), and only a model's explicit
 * `NO_RELEVANT_MEMORY` judges relevance; a lexical scorer that finds no shared words has
 * produced an empty digest, which §8.2 normalises to `failed` (rendered kept).
 */
export function rewriteDigestHandler(deps: HandlerDeps): Handler<rewrite.RewriteDigestRequest, rewrite.RewriteDigestResponse> {
  return async (req, ctx) => {
    const maxBullets = req.maxBullets === 0 ? DEFAULT_MAX_BULLETS : Math.max(1, req.maxBullets);
    const allow = req.servedUris.length > 0 ? req.servedUris : req.sources.map((s) => s.uri);
    if (allow.length === 0) return { status: 'off', digest: '', engine: '' };

    if (!deps.chat) {
      if (req.onlyIfModel) return { status: 'off', digest: '', engine: '' };
      const bullets = extractiveDigest({ query: req.query, sources: req.sources, allowedUris: new Set(allow), maxBullets });
      // No shared words is not evidence that nothing is relevant (synonyms, other languages):
      // an empty extractive output is an empty digest, `failed` like a model's empty answer.
      if (bullets.length === 0) return { status: 'failed', digest: '', engine: 'extractive' };
      // The same normalisation as a model's answer: the digest carries one contract, whoever wrote it.
      const n = normalizeDigest(bullets.map((b) => b.line).join('\n'), allow, maxBullets);
      return { status: n.status, digest: n.digest, engine: 'extractive' };
    }

    const timeoutMs = fuseMs(deps.settings.rewriteTimeoutMs, req.timeoutMs, ctx.budget.remainingMs());
    const prompt = buildDigestPrompt(req.query, digestContext(req.rendered, req.sources), maxBullets);
    try {
      const out = await deps.chat.complete(prompt, { timeoutMs, signal: ctx.budget.signal });
      const n = normalizeDigest(out.content, allow, maxBullets);
      return { status: n.status, digest: n.digest, engine: 'model', ...(out.usage ? { usage: out.usage } : {}) };
    } catch (err) {
      return { status: failureOf(err, ctx.log, 'digest rewrite').status, digest: '', engine: 'model' };
    }
  };
}
