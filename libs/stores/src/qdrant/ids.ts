import { createHash } from 'node:crypto';

/** UUID namespace of ctxmesh point ids (a fixed random v4 UUID; never change it: ids are persisted). */
export const POINT_ID_NAMESPACE = '6f1c1e5a-3b7d-4c2e-9a41-8d0f2b6c7e93';

function uuidBytes(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new RangeError(`not a UUID: ${uuid}`);
  return Buffer.from(hex, 'hex');
}

/**
 * RFC 9562 UUIDv5 (SHA-1, name-based) of `name` in `namespace`: the same name always gives the
 * same id, so writes are idempotent and ids are computable without a lookup.
 * @returns lower-case hyphenated UUID
 */
export function uuidV5(name: string, namespace: string = POINT_ID_NAMESPACE): string {
  const hash = createHash('sha1').update(uuidBytes(namespace)).update(name, 'utf8').digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50; // version 5
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC variant
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Point id of one indexed URI of one version of a document: UUIDv5 of
 * `account ␀ uri ␀ contentHash`. URIs repeat across accounts (`viking://resources/…`), so the
 * account is part of the name; the content hash makes each version's points distinct, which is
 * what lets a new version be written beside the live one and switched on atomically.
 */
export function pointId(account: string, uri: string, contentHash: string): string {
  return uuidV5(`${account}\u0000${uri}\u0000${contentHash}`);
}
