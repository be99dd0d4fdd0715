/**
 * The time a provider call may take: the service's configured fuse, the caller's
 * `timeout_ms` (the orchestrator clamps it to the request's remaining time), and the
 * call's own gRPC deadline, minus a little room to send the answer back.
 */

/** Most time kept back from the gRPC deadline to deliver the answer, in ms. */
export const RESPONSE_RESERVE_MAX_MS = 250;

/**
 * Room kept back from a call's remaining time: a tenth of it, at most
 * {@link RESPONSE_RESERVE_MAX_MS}. Without it the fuse would expire together with the
 * caller's deadline, and the caller would see DEADLINE_EXCEEDED instead of a `timeout` status.
 * The cap is generous because the reserve must also absorb the event loop's lateness on a busy
 * host: a timer due at the fuse can fire tens of milliseconds late (50 ms was not enough on a
 * loaded 2-core CI machine, where the caller's deadline passed first).
 */
export function responseReserveMs(remainingMs: number): number {
  return Math.min(RESPONSE_RESERVE_MAX_MS, Math.floor(Math.max(0, remainingMs) / 10));
}

/**
 * The fuse of one provider call in ms: min(configured, requested when > 0, remaining −
 * reserve), never negative. 0 means "no time": the call is not made and reports `timeout`.
 * @param configuredMs the service's fuse (e.g. 30000 for a digest rewrite)
 * @param requestedMs the caller's `timeout_ms` (0 = not sent)
 * @param remainingMs time left before the call's gRPC deadline
 */
export function fuseMs(configuredMs: number, requestedMs: number, remainingMs: number): number {
  const cap = requestedMs > 0 ? Math.min(configuredMs, requestedMs) : configuredMs;
  return Math.max(0, Math.floor(Math.min(cap, remainingMs - responseReserveMs(remainingMs))));
}
