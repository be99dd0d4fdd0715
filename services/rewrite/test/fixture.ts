/**
 * A rewrite service over real gRPC on port 0, pointed at a scripted provider, with typed
 * calls that take a deadline in ms.
 */
import { rewrite } from '@ctxmesh/proto';
import { Budget, callUnary, connect } from '@ctxmesh/rpc';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { chatCompletionsUrl, createServer, defaultSettings, rerankUrl, type RewriteSettings } from '../src';

/** Settings with the chat model (and optionally the reranker) at `providerUrl`. */
export function modelSettings(providerUrl: string, overrides: Partial<RewriteSettings> = {}): RewriteSettings {
  return defaultSettings({
    llm: { url: chatCompletionsUrl(providerUrl), apiKey: 'sk-test', model: 'test-model' },
    rerank: { url: rerankUrl(providerUrl), apiKey: 'rk-test', model: 'test-reranker', style: 'documents' },
    ...overrides,
  });
}

/** A running rewrite service and a client. */
export interface RewriteFixture {
  /** The server. */
  srv: TestServer;
  /** Calls with a gRPC deadline of `ms` (default 5000). */
  expandQuery(req: Partial<rewrite.ExpandQueryRequest>, ms?: number): Promise<rewrite.ExpandQueryResponse>;
  rewriteDigest(req: Partial<rewrite.RewriteDigestRequest>, ms?: number): Promise<rewrite.RewriteDigestResponse>;
  rewriteQuery(req: Partial<rewrite.RewriteQueryRequest>, ms?: number): Promise<rewrite.RewriteQueryResponse>;
  rerank(req: Partial<rewrite.RerankRequest>, ms?: number): Promise<rewrite.RerankResponse>;
  /** Close client and server. */
  close(): Promise<void>;
}

/** Start the service with `settings`. */
export async function startRewriteFixture(settings: RewriteSettings): Promise<RewriteFixture> {
  const srv = await startTestServer([createServer({ settings, log: pino({ level: 'silent' }) })]);
  const client = connect(rewrite.RewriteServiceClient, srv.address);
  const opts = { domain: 'rewrite' };
  return {
    srv,
    expandQuery: (req, ms = 5000) =>
      callUnary(client.expandQuery.bind(client), rewrite.ExpandQueryRequest.fromPartial(req), Budget.ofMs(ms), opts),
    rewriteDigest: (req, ms = 5000) =>
      callUnary(client.rewriteDigest.bind(client), rewrite.RewriteDigestRequest.fromPartial(req), Budget.ofMs(ms), opts),
    rewriteQuery: (req, ms = 5000) =>
      callUnary(client.rewriteQuery.bind(client), rewrite.RewriteQueryRequest.fromPartial(req), Budget.ofMs(ms), opts),
    rerank: (req, ms = 5000) => callUnary(client.rerank.bind(client), rewrite.RerankRequest.fromPartial(req), Budget.ofMs(ms), opts),
    close: async () => {
      client.close();
      await srv.close();
    },
  };
}
