/**
 * The inspector page (`GET /inspect`): plain HTML, CSS and ES modules from
 * `services/gateway/inspect/`, read once when the app is built and served as they are. The
 * page holds no data: everything it shows comes from the authenticated API with the
 * credentials the user gives it, so the page itself is served like `/health`, without auth,
 * and `GET /inspect/config.json` tells it which credentials the gateway expects. A Content
 * Security Policy keeps it to this origin: nothing is loaded from anywhere else.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AuthConfig } from '../domain';
import { GATEWAY_NAME } from './ops';

/** Where the page's files are (`src/routes` and `dist/routes` both sit two levels below the package). */
export const INSPECT_DIR = join(__dirname, '..', '..', 'inspect');

/** The files the page is made of, by the name under `/inspect/assets/`, with their media type. */
const ASSETS: Readonly<Record<string, string>> = {
  'inspect.js': 'text/javascript; charset=utf-8',
  'view.js': 'text/javascript; charset=utf-8',
  'inspect.css': 'text/css; charset=utf-8',
};

/** Only this origin, no inline script, no framing. */
export const INSPECT_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Options of {@link inspectRoutes}. */
export interface InspectOptions {
  /** The gateway's auth mode: the page asks for a key in `api_key` mode, offers identity fields otherwise. */
  auth: AuthConfig;
  /** Shown by the page (`/health`'s version). */
  version: string;
  /** Directory of the page's files. @default INSPECT_DIR */
  dir?: string;
}

/**
 * Mount `GET /inspect`, `GET /inspect/assets/<file>` and `GET /inspect/config.json`.
 * @throws Error when a page file is missing (the package is incomplete: fail at start, not on first view)
 */
export function inspectRoutes(app: FastifyInstance, opts: InspectOptions): void {
  const dir = opts.dir ?? INSPECT_DIR;
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  const assets = new Map(Object.entries(ASSETS).map(([name, type]) => [name, { type, body: readFileSync(join(dir, name), 'utf8') }]));
  const config = JSON.stringify({ name: GATEWAY_NAME, version: opts.version, auth_mode: opts.auth.mode });

  app.get('/inspect', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', INSPECT_CSP).header('cache-control', 'no-cache').send(html),
  );
  app.get('/inspect/config.json', async (_request, reply) => reply.type('application/json').header('cache-control', 'no-store').send(config));
  app.get('/inspect/assets/:file', async (request, reply) => {
    const asset = assets.get((request.params as { file: string }).file);
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(asset.body);
  });
}
