/**
 * Shared fixture of the context-contract suite: the real mesh in process (embedded SQLite
 * store, in-process bus, gateway on a free port), a small HTTP client that speaks like the
 * harness plugins, and seeding through the real write path.
 *
 * Isolation: every scenario gets its own account *and* user (and its own URI prefixes), so
 * scenarios never see each other's nodes whether the store keys nodes by URI alone or by
 * account and URI.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { common, indexer } from '@ctxmesh/proto';
import { silentLogger, type Env } from '@ctxmesh/runtime';
import { startMesh, type Mesh } from '../../../apps/ctxmesh/src/mesh';

/** Who a request is made as. */
export interface Who {
  /** `X-OpenViking-Account` (dev mode). */
  account: string;
  /** `X-OpenViking-User` (dev mode); the user root is `viking://user/{user}`. */
  user: string;
  /** `X-OpenViking-Actor-Peer`, when set. */
  actorPeer?: string;
  /** `X-API-Key` (api_key mode); identity headers are still sent, and must be ignored. */
  apiKey?: string;
}

/** An HTTP answer: status, parsed JSON body (or null), headers. */
export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
  /** The body as received. */
  raw: string;
}

/** One context entry as the gateway sends it (§6.2). */
export interface EntryJson {
  uri: string;
  category: string;
  score: number;
  detail: 'uri' | 'abstract' | 'overview' | 'full';
  text: string;
  origin: string;
}

/** The context-mode `result` (§1.6). */
export interface ContextJson {
  entries: EntryJson[];
  rendered: string;
  digest: string;
  stats: Record<string, any>;
}

/** A running mesh and its temporary data directory. */
export interface ContractMesh {
  mesh: Mesh;
  /** Gateway base URL. */
  url: string;
  /** Stop the mesh and remove the data directory. */
  stop(): Promise<void>;
}

/**
 * Start the whole mesh in process on a fresh data directory: embedded stores, in-process
 * bus (no `REDIS_URL`/`NATS_URL` are passed on purpose), gateway on a free port. The contract
 * is the `compat` packing's (the server's default is `evidence`), so the suite runs with
 * `CTXMESH_CONTEXT_PACKING=compat` unless `env` says otherwise.
 * @param env extra variables (e.g. `CTXMESH_AUTH_MODE`, `CTXMESH_API_KEYS`)
 */
export async function startContractMesh(env: Env = {}): Promise<ContractMesh> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-contract-'));
  try {
    const mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: '0', CTXMESH_CONTEXT_PACKING: 'compat', ...env }, log: silentLogger() });
    return {
      mesh,
      url: mesh.gatewayUrl,
      stop: async () => {
        await mesh.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

let counter = 0;

/**
 * A fresh identity: account `c-<tag>-<n>` and user `u<tag><n>`, unique in this process.
 * @param tag short name of the scenario (letters/digits)
 */
export function freshWho(tag: string, extra: Partial<Who> = {}): Who {
  counter += 1;
  const t = tag.replace(/[^A-Za-z0-9]/g, '').toLowerCase();
  return { account: `c-${t}-${counter}`, user: `u${t}${counter}`, ...extra };
}

/** The headers a plugin sends for `who`. */
export function headersFor(who: Who | null): Record<string, string> {
  if (!who) return {};
  const h: Record<string, string> = { 'X-OpenViking-Account': who.account, 'X-OpenViking-User': who.user };
  if (who.actorPeer !== undefined) h['X-OpenViking-Actor-Peer'] = who.actorPeer;
  if (who.apiKey !== undefined) h['X-API-Key'] = who.apiKey;
  return h;
}

/**
 * Send one request over real HTTP.
 * @param body a value to JSON-encode, or a `{ raw }` string sent as is
 */
export async function send(url: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const payload = body === undefined ? undefined : typeof body === 'object' && body !== null && 'raw' in body ? String((body as { raw: unknown }).raw) : JSON.stringify(body);
  const res = await fetch(url + path, {
    method,
    headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  const raw = await res.text();
  let parsed: unknown = null;
  try {
    parsed = raw === '' ? null : JSON.parse(raw);
  } catch {
    parsed = null;
  }
  return { status: res.status, body: parsed, headers: res.headers, raw };
}

/** `POST /api/v1/search/search` as `who`. */
export function search(cm: ContractMesh, who: Who | null, body: unknown, extraHeaders: Record<string, string> = {}): Promise<Answer> {
  return send(cm.url, 'POST', '/api/v1/search/search', body, { ...headersFor(who), ...extraHeaders });
}

/**
 * A context request that must succeed.
 * @throws Error with the response when the status is not 200
 */
export async function context(cm: ContractMesh, who: Who | null, body: Record<string, unknown>): Promise<ContextJson> {
  const res = await search(cm, who, { mode: 'context', ...body });
  if (res.status !== 200) throw new Error(`context request failed: ${res.status} ${res.raw}`);
  return res.body.result as ContextJson;
}

/**
 * Write one node through `POST /api/v1/content/write` with `wait:true` (searchable on return).
 * @throws Error unless the write was applied
 */
export async function write(cm: ContractMesh, who: Who, uri: string, content: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await send(cm.url, 'POST', '/api/v1/content/write', { uri, content, mode: 'replace', wait: true, ...extra }, headersFor(who));
  if (res.status !== 200 || res.body?.result?.status !== 'applied') throw new Error(`write of ${uri} failed: ${res.status} ${res.raw}`);
}

/** Write several nodes concurrently (each waits until indexed). */
export async function writeAll(cm: ContractMesh, who: Who, docs: ReadonlyArray<readonly [string, string]>): Promise<void> {
  await Promise.all(docs.map(([uri, content]) => write(cm, who, uri, content)));
}

/**
 * Write a directory sidecar (`D/.abstract.md`, `D/.overview.md`) on the ingest stream the
 * gateway publishes to, and wait for the indexer's done notice. The REST route refuses
 * sidecar URIs (see the suite's README note), so this is the one write that bypasses it;
 * everything downstream of the gateway is the real path.
 * @throws Error unless the write was applied
 */
export async function writeSidecar(cm: ContractMesh, who: Who, uri: string, content: string): Promise<void> {
  const writeId = randomUUID();
  const op: indexer.WriteOp = {
    writeId,
    identity: { accountId: who.account, userId: who.user, role: common.Role.ROLE_ROOT, actorPeerId: '', workspace: '', requestId: writeId },
    uri,
    content,
    mode: indexer.WriteMode.WRITE_MODE_REPLACE,
    validFromMs: undefined,
    validToMs: undefined,
    tags: [],
    publishedAtMs: Date.now(),
    subject: '',
  };
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 30_000);
  try {
    const waiter = cm.mesh.bus.awaitDone(writeId, ac.signal);
    await cm.mesh.bus.publish({ subject: 'ctxmesh.ingest.write', id: writeId, data: indexer.WriteOp.encode(op).finish(), key: uri });
    const notice = await waiter.done;
    if (notice.status !== 'applied') throw new Error(`sidecar write of ${uri} failed: ${notice.reason} ${notice.message}`);
  } finally {
    clearTimeout(timer);
  }
}

/** `viking://user/{user}` of `who`. */
export function rootOf(who: Who): string {
  return `viking://user/${who.user}`;
}
