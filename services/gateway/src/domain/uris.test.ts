import { DomainError } from './errors';
import { assertTargetsAccessible, IMAGE_URL_MESSAGE, normalizeExcludeUris, resolveImageUrl, resolveTargetUris } from './uris';

function domainError(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
}

describe('resolveTargetUris', () => {
  it.each<[string | string[] | null | undefined, string[]]>([
    [undefined, []],
    [null, []],
    ['', []],
    [[], []],
    ['viking://~/memories', ['viking://user/default/memories']],
    ['viking://~', ['viking://user/default']],
    [['viking://~/skills', ' viking://resources/docs/ ', ''], ['viking://user/default/skills', 'viking://resources/docs']],
  ])('%j → %j', (target, expected) => {
    expect(resolveTargetUris(target, 'default')).toEqual(expected);
  });

  it.each([['http://x'], ['viking://nowhere/x'], ['viking://user/memories'], [['viking://resources', 'viking://resources/../x']]])(
    'rejects %j with INVALID_URI',
    (target) => {
      const e = domainError(() => resolveTargetUris(target, 'default'));
      expect([e.code, e.status]).toEqual(['INVALID_URI', 400]);
      expect(e.message).toMatch(/^Invalid URI: .+ \(.+\)$/);
      expect(Object.keys(e.details)).toEqual(['uri', 'reason']);
    },
  );
});

describe('assertTargetsAccessible', () => {
  it.each<[string, 'root' | 'admin' | 'user', string[], boolean]>([
    ['own space', 'user', ['viking://user/alice/memories'], true],
    ['shared resources', 'user', ['viking://resources', 'viking://agent/skills'], true],
    ['the users root', 'user', ['viking://user'], true],
    ['another user’s space', 'user', ['viking://user/bob/memories'], false],
    ['a prefix-sharing user', 'user', ['viking://user/alice2'], false],
    ['root may target other users', 'root', ['viking://user/bob'], true],
    ['admin may target other users', 'admin', ['viking://user/bob'], true],
  ])('%s', (_t, role, targets, allowed) => {
    const check = () => assertTargetsAccessible(targets, { userId: 'alice', role });
    if (allowed) expect(check).not.toThrow();
    else {
      const e = domainError(check);
      expect([e.code, e.status]).toEqual(['PERMISSION_DENIED', 403]);
      expect(e.message).toContain('Access denied');
    }
  });
});

describe('normalizeExcludeUris', () => {
  it('trims, drops empties, expands ~ and collapses duplicates', () => {
    expect(normalizeExcludeUris([' viking://~/memories/events/a.md ', '', '   ', 'viking://user/default/memories/events/a.md', 'viking://resources/x/'], 'default')).toEqual([
      'viking://user/default/memories/events/a.md',
      'viking://resources/x',
    ]);
  });

  it('uses only the first 200 items', () => {
    const uris = Array.from({ length: 205 }, (_, i) => `viking://resources/${i}`);
    uris[203] = 'not-a-uri';
    const got = normalizeExcludeUris(uris, 'u');
    expect(got).toHaveLength(200);
    expect(got[199]).toBe('viking://resources/199');
  });

  it.each(['resources/x', 'viking://elsewhere/x', 'viking://user/memories/events', 'viking://user/profile.md'])('rejects %p with INVALID_URI', (uri) => {
    const e = domainError(() => normalizeExcludeUris([uri], 'default'));
    expect(e.code).toBe('INVALID_URI');
  });

  it('accepts null and undefined', () => {
    expect(normalizeExcludeUris(null, 'u')).toEqual([]);
    expect(normalizeExcludeUris(undefined, 'u')).toEqual([]);
  });
});

describe('resolveImageUrl', () => {
  it.each<[string | null | undefined, string | null]>([
    [undefined, null],
    [null, null],
    ['', null],
    ['data:image/png;base64,AAAA', 'data:image/png;base64,AAAA'],
    ['http://example.com/a.png', 'http://example.com/a.png'],
    ['https://example.com/a.png', 'https://example.com/a.png'],
    ['viking://~/resources/pic.png', 'viking://user/alice/resources/pic.png'],
    ['viking://resources/pic.png', 'viking://resources/pic.png'],
  ])('%p → %p', (input, expected) => {
    expect(resolveImageUrl(input, 'alice')).toBe(expected);
  });

  it.each(['ftp://x/a.png', 'data:text/plain;base64,AA', 'file:///etc/passwd', ' ', 'pic.png'])('rejects %p with the exact INVALID_ARGUMENT message', (input) => {
    const e = domainError(() => resolveImageUrl(input, 'alice'));
    expect([e.code, e.status, e.message]).toEqual(['INVALID_ARGUMENT', 400, IMAGE_URL_MESSAGE]);
    expect(IMAGE_URL_MESSAGE).toBe('image_url must be a data:image base64 URI, http(s) URL, or viking:// URI.');
  });

  it('rejects a malformed viking image with INVALID_URI', () => {
    const e = domainError(() => resolveImageUrl('viking://user/memories/x.png', 'alice'));
    expect(e.code).toBe('INVALID_URI');
  });
});
