/**
 * Fragment pricing shared by both packings: token counts of whole rendered fragments (§5.1:
 * the cost of an entry is its fragment, envelope included) in the request's tokenizer, and
 * the per-candidate tier texts the planners work on.
 */
import { pyStrip } from './python';
import type { TierTexts } from './overview';
import { completeFragment, fragmentHead, neutralizeTags, type Neutralization } from './render';
import { type DetailSpec, type Tier, type TierPolicy, pinFor, tierPolicy } from './tiers';
import { type TokenizerName, countTokens, countTokensWithin, estimateQuarters } from './tokens';

/** A ranked candidate as gathered (§3.5); field names follow the reference kernel. */
export interface Candidate {
  /** Node URI (a directory hit carries the directory, not its sidecar). */
  readonly uri: string;
  /** Reported category (§2.2). */
  readonly category: string;
  /** Raw retrieval score. */
  readonly score: number;
  /** Stored abstract; `null`/absent reads as `""`. */
  readonly abstract?: string | null;
  /** True when the hit was a directory sidecar. */
  readonly is_directory?: boolean;
  /** `actor_peer`, `self` or `other_peer`. */
  readonly origin: string;
  /**
   * Score after the other-peer penalty (ranking only). Absent → `score`. Compat never reads
   * it (its candidates arrive ranked); evidence compares it with the relevance floor.
   */
  readonly ranked_score?: number;
  /**
   * The overview the index stored for the node (what its hit carried), absent or `""` when
   * unknown. Compat never reads it (§4.1: overviews come from bodies); evidence uses it for
   * candidates whose body it does not read, and to size the read decision.
   */
  readonly stored_overview?: string | null;
}

const OPEN_TAIL_Q = estimateQuarters('>\n');
const CLOSE_TAIL_Q = estimateQuarters('\n</memory>');
const SELF_CLOSE_Q = estimateQuarters(' />');

/**
 * Prices rendered fragments in one tokenizer, remembering what it has counted: the estimate
 * of a text is additive, so a body shared by several candidates is scanned once; an exact
 * tokenizer sees each distinct fragment at most once per limit it could not settle, and
 * stops encoding as soon as a fragment is over the limit being checked.
 */
export class FragmentPricer {
  private readonly textQuarters = new Map<string, number>();
  /** Exact counts of fragments. */
  private readonly exact = new Map<string, number>();
  /** Largest limit each unsettled fragment is known to exceed. */
  private readonly over = new Map<string, number>();
  /** Counts of plain lines. */
  private readonly lines = new Map<string, number>();

  /**
   * @param tokenizer the request's tokenizer
   * @param neutralization how bodies are defused in the fragments being priced (it changes
   *   their length, so pricing and rendering must agree) @default "reference"
   */
  constructor(
    readonly tokenizer: TokenizerName,
    readonly neutralization: Neutralization = 'reference',
  ) {}

  /** Tokens of a plain line of markup (a group's opening or closing line), counted once. */
  plain(text: string): number {
    let n = this.lines.get(text);
    if (n === undefined) {
      n = countTokens(text, this.tokenizer);
      this.lines.set(text, n);
    }
    return n;
  }

  /**
   * Tokens of the fragment `head` + text (the self-closing form when `text` is `""`), or
   * `Infinity` when it is more than `limit`.
   */
  price(head: string, text: string, limit: number): number {
    if (this.tokenizer === 'estimate') {
      const h = estimateQuarters(head);
      let q: number;
      if (text === '') {
        q = h + SELF_CLOSE_Q;
      } else {
        let t = this.textQuarters.get(text);
        if (t === undefined) {
          t = estimateQuarters(neutralizeTags(text, this.neutralization));
          this.textQuarters.set(text, t);
        }
        q = h + OPEN_TAIL_Q + t + CLOSE_TAIL_Q;
      }
      const n = Math.ceil(q / 4);
      return n <= limit ? n : Infinity;
    }
    const fragment = completeFragment(head, text, this.neutralization);
    const known = this.exact.get(fragment);
    if (known !== undefined) return known <= limit ? known : Infinity;
    const exceeded = this.over.get(fragment);
    if (exceeded !== undefined && limit <= exceeded) return Infinity;
    const n = countTokensWithin(fragment, limit, this.tokenizer);
    if (n === Infinity) this.over.set(fragment, Math.max(limit, exceeded ?? -Infinity));
    else this.exact.set(fragment, n);
    return n;
  }
}

/** One candidate's tier decisions and texts during planning. */
export interface Slot {
  readonly candidate: Candidate;
  readonly policy: TierPolicy;
  /** Text per tier (`""` = unavailable; always `""` for `uri`). */
  readonly texts: Record<Tier, string>;
}

/**
 * The planning view of a candidate: its tier policy (§4.2–§4.3) and its tier texts. The
 * abstract is trimmed; a directory never has a `full` tier.
 * @param texts the body-backed texts the tier-reader produced (absent when the body was not read)
 * @param fallbackOverview an overview to use when `texts` has none (evidence: the stored one)
 */
export function slotFor(candidate: Candidate, spec: DetailSpec, texts: Pick<TierTexts, 'overview' | 'full'> | null | undefined, fallbackOverview = ''): Slot {
  const isDirectory = candidate.is_directory === true;
  const abstract = pyStrip(candidate.abstract ?? '');
  const pin = isDirectory ? null : pinFor(spec, candidate.category);
  return {
    candidate,
    policy: tierPolicy(candidate.category, isDirectory, abstract !== '', pin),
    texts: {
      uri: '',
      abstract,
      overview: texts?.overview || fallbackOverview,
      full: isDirectory ? '' : (texts?.full ?? ''),
    },
  };
}

/** Fragment tokens of a slot at a tier, or `Infinity` when over `limit`. */
export function tokensOf(slot: Slot, tier: Tier, pricer: FragmentPricer, limit: number): number {
  const c = slot.candidate;
  return pricer.price(fragmentHead(c.uri, c.category, c.score, tier), slot.texts[tier], limit);
}

/** The rendered fragment of a slot at a tier. */
export function fragmentOf(slot: Slot, tier: Tier, neutralization: Neutralization): string {
  const c = slot.candidate;
  return completeFragment(fragmentHead(c.uri, c.category, c.score, tier), slot.texts[tier], neutralization);
}
