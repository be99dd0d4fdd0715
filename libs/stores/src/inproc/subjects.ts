/**
 * NATS subject matching: tokens separated by `.`; `*` matches exactly one token and `>` (last
 * token only) one or more. Used by the in-process bus so its filters behave like JetStream's.
 * @returns true when `subject` matches `filter`
 */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    const t = f[i]!;
    if (t === '>') return i === f.length - 1 && s.length > i;
    if (i >= s.length) return false;
    if (t !== '*' && t !== s[i]) return false;
  }
  return f.length === s.length;
}

/**
 * Validate a subject to publish on: non-empty tokens, no wildcards, no whitespace.
 * @returns an error text, or null when valid
 */
export function invalidSubject(subject: string): string | null {
  if (subject === '' || /\s/.test(subject)) return `invalid subject "${subject}"`;
  for (const t of subject.split('.')) {
    if (t === '') return `invalid subject "${subject}": empty token`;
    if (t === '*' || t === '>') return `invalid subject "${subject}": wildcards cannot be published to`;
  }
  return null;
}
