/**
 * Deployment invariants, checked without Docker or kubectl (neither runs on the build
 * machines): docker-compose.yml, deploy/Dockerfile and deploy/k8s are parsed as data and held
 * against the services' own configuration loaders, so a renamed variable, a wrong port or a
 * forgotten probe fails here instead of in a cluster.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadGatewayConfig } from '@ctxmesh/gateway';
import { LOADERS, SERVICES as SERVICE_NAMES, type Env } from './__tests__/service-configs';

// Parsed YAML is untyped by nature; the checks below are what give it a shape.
type Y = any;

const ROOT = resolve(__dirname, '../../..');
const DEPLOY = join(ROOT, 'deploy');
const K8S = join(DEPLOY, 'k8s');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

const SERVICES = [...SERVICE_NAMES];
const INFRA = ['nats', 'qdrant', 'redis'];
const IMAGE_REPO = 'ctxmesh';

/** Variables read by shared libraries rather than a service schema, and where. */
const PROCESS_VARS: Record<string, string> = {
  LOG_LEVEL: 'libs/runtime/src/logger.ts',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'libs/telemetry/src/index.ts',
};
/** The rpc server's drain bound before it forces shutdown (`startServer` shutdownGraceMs default). */
const DRAIN_MS = 10_000;

/** `tier-reader` → `TIER_READER` (STYLE B3: one token, kebab-case here, UPPER_SNAKE in env). */
const envPrefix = (svc: string) => svc.toUpperCase().replace(/-/g, '_');

/** The variables a loader reads, found by handing it an environment that records every lookup. */
function knownVars(svc: string): Set<string> {
  const seen = new Set<string>();
  const env = new Proxy({} as Env, {
    get(_t, key) {
      if (typeof key === 'string' && /^[A-Z][A-Z0-9_]*$/.test(key)) seen.add(key);
      return undefined;
    },
  });
  try {
    LOADERS[svc](env);
  } catch {
    // Only the lookups matter here; whether an empty environment is valid is tested elsewhere.
  }
  return seen;
}
const KNOWN = Object.fromEntries(SERVICES.map((s) => [s, knownVars(s)]));

/** True when `svc` may be given `name`: its schema, its main.ts, or a shared library reads it. */
function accepts(svc: string, name: string): boolean {
  if (KNOWN[svc].has(name)) return true;
  const lib = PROCESS_VARS[name];
  if (lib && read(lib).includes(name)) return true;
  return read(`services/${svc}/src/main.ts`).includes(`process.env.${name}`);
}

/** Compose-style interpolation with an empty shell environment: `${X:-d}` → d, `${X}` → ''. */
function interpolate(v: string): string {
  return v.replace(/\$\$/g, '\u0000').replace(/\$\{([A-Z0-9_]+)(?::?[-?]([^}]*))?\}/g, (_m, _n, def: string | undefined) => def ?? '').replace(/\u0000/g, '$');
}

/** `host:port` or a URL → host and port. */
function hostPort(v: string): { host: string; port: number } {
  if (/^[a-z]+:\/\//.test(v)) {
    const u = new URL(v);
    const dflt: Record<string, number> = { 'http:': 80, 'https:': 443, 'redis:': 6379, 'rediss:': 6379, 'nats:': 4222 };
    return { host: u.hostname, port: u.port ? Number(u.port) : dflt[u.protocol] };
  }
  const [host, port] = v.split(':');
  return { host, port: Number(port) };
}

/** Variables naming another service or store: `<SVC>_ADDR` and the store URLs. */
const isLink = (name: string) => name.endsWith('_ADDR') || ['REDIS_URL', 'NATS_URL', 'QDRANT_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT'].includes(name);

/** CPU in millicores, memory in bytes. */
function quantity(q: string | number): number {
  const s = String(q);
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G)?$/.exec(s);
  if (!m) throw new Error(`not a quantity: ${s}`);
  const n = Number(m[1]);
  const mult: Record<string, number> = { m: 1, '': 1000, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9 };
  return n * mult[m[2] ?? ''];
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  selector !== undefined && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

// ---------------------------------------------------------------------------------------------
// Loading

const compose: Y = parse(read('docker-compose.yml'), { merge: true });

/** A multi-document YAML file. */
function docsOf(file: string): Y[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0].message}`);
      return d.toJS({ merge: true }) as Y;
    })
    .filter((d) => d !== null && d !== undefined);
}

/** What a kustomization directory declares, with every path resolved. */
interface Kustomization {
  dir: string;
  spec: Y;
  /** Objects of `resources` (recursively through other kustomizations) and of components. */
  objects: Y[];
}

function loadKustomization(dir: string): Kustomization {
  const file = join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new Error(`no kustomization.yaml in ${dir}`);
  const spec: Y = parse(readFileSync(file, 'utf8'));
  const objects: Y[] = [];
  for (const r of (spec.resources ?? []) as string[]) {
    const p = resolve(dir, r);
    if (!existsSync(p)) throw new Error(`${file}: resource ${r} does not exist`);
    objects.push(...(statSync(p).isDirectory() ? loadKustomization(p).objects : docsOf(p)));
  }
  for (const c of (spec.components ?? []) as string[]) objects.push(...loadKustomization(resolve(dir, c)).objects);
  // Generated ConfigMaps (the ones this kustomization creates; `merge` entries change one that
  // an ancestor created and are checked where they apply).
  for (const g of (spec.configMapGenerator ?? []) as Y[]) {
    if (g.behavior === 'merge') continue;
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: g.name }, data: generatorData(dir, g) });
  }
  return { dir, spec, objects };
}

/** The data of a configMapGenerator entry: its env files (`KEY=value`, `#` comments) and literals. */
function generatorData(dir: string, g: Y): Record<string, string> {
  const data: Record<string, string> = {};
  const line = (l: string) => {
    const t = l.trim();
    if (t === '' || t.startsWith('#')) return;
    const i = t.indexOf('=');
    data[t.slice(0, i)] = t.slice(i + 1);
  };
  for (const f of (g.envs ?? []) as string[]) readFileSync(resolve(dir, f), 'utf8').split('\n').forEach(line);
  for (const l of (g.literals ?? []) as string[]) line(l);
  return data;
}

const byKind = (objects: Y[], kind: string) => objects.filter((o) => o.kind === kind);
const find = (objects: Y[], kind: string, name: string): Y => objects.find((o) => o.kind === kind && o.metadata?.name === name);

const base = loadKustomization(join(K8S, 'base'));
const overlays = ['dev', 'prod'].map((o) => loadKustomization(join(K8S, 'overlays', o)));
const components = readdirSync(join(K8S, 'components')).map((c) => loadKustomization(join(K8S, 'components', c)));

/** The literal env of a container (valueFrom entries are references, checked separately). */
function literalEnv(container: Y): Env {
  const env: Env = {};
  for (const e of (container.env ?? []) as Y[]) if (e.value !== undefined && e.value !== null) env[e.name] = String(e.value);
  return env;
}

/** The ConfigMaps a container takes its env from, in order (later ones win, as in Kubernetes). */
function envFromMaps(container: Y, objects: Y[]): Y[] {
  return ((container.envFrom ?? []) as Y[]).map((f) => {
    const cm = find(objects, 'ConfigMap', f.configMapRef?.name);
    if (!cm) throw new Error(`envFrom names a ConfigMap that is not generated: ${JSON.stringify(f)}`);
    return cm;
  });
}

/** A container's settings: its ConfigMaps' data, then its literal env (which wins). */
function containerEnv(container: Y, objects: Y[] = base.objects): Env {
  const env: Env = {};
  for (const cm of envFromMaps(container, objects)) Object.assign(env, cm.data);
  return { ...env, ...literalEnv(container) };
}
/** The variables a container takes from Secrets (secretKeyRef), by name. */
const secretVars = (container: Y): string[] => ((container.env ?? []) as Y[]).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name as string);
/** Settings shared by every ctxmesh server (ConfigMap ctxmesh-common); compose leaves them to the defaults. */
const COMMON = (): Env => find(base.objects, 'ConfigMap', 'ctxmesh-common').data;
const serverOf = (deployment: Y): Y => deployment.spec.template.spec.containers.find((c: Y) => c.name === 'server');
const k8sEnv = (svc: string) => containerEnv(serverOf(find(base.objects, 'Deployment', svc)));
const composeEnv = (svc: string): Env =>
  Object.fromEntries(Object.entries((compose.services[svc].environment ?? {}) as Record<string, unknown>).map(([k, v]) => [k, interpolate(String(v))]));

/**
 * Problems of a service left on an embedded store: the containers' root filesystem is
 * read-only, so every production store a service can use must be configured.
 */
function embeddedFallbacks(svc: string, env: Env): string[] {
  const out: string[] = [];
  for (const name of ['REDIS_URL', 'NATS_URL', 'QDRANT_URL']) if (KNOWN[svc].has(name) && !env[name]) out.push(`${svc}: ${name} unset`);
  if (KNOWN[svc].has('CTXMESH_VECTOR') && env.CTXMESH_VECTOR !== 'qdrant') out.push(`${svc}: CTXMESH_VECTOR is not qdrant`);
  return out;
}

/** The port a service listens on, from its own `<SVC>_PORT`. */
const portOf = (env: Env, svc: string) => Number(env[`${envPrefix(svc)}_PORT`]);

// ---------------------------------------------------------------------------------------------

describe('service list', () => {
  it('has one entry per services/ directory, in compose and in the k8s base', () => {
    const dirs = readdirSync(join(ROOT, 'services')).filter((d) => existsSync(join(ROOT, 'services', d, 'package.json')));
    expect(dirs.sort()).toEqual(SERVICES);
    expect(Object.keys(compose.services).sort()).toEqual([...INFRA, ...SERVICES].sort());
    expect(byKind(base.objects, 'Deployment').map((d) => d.metadata.name).sort()).toEqual(SERVICES);
    for (const svc of SERVICES) expect(existsSync(join(K8S, 'base', `${svc}.yaml`))).toBe(true);
  });

  it('uses kebab-case names that the CLI accepts for `ctxmesh serve`', () => {
    const bin = read('apps/ctxmesh/src/bin.ts');
    for (const svc of SERVICES) {
      expect(svc).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(bin).toContain(`'${svc}'`);
    }
  });
});

describe('deploy/Dockerfile', () => {
  const text = read('deploy/Dockerfile').replace(/\\\n/g, ' ');
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const args = Object.fromEntries(lines.filter((l) => /^ARG \w+=/.test(l)).map((l) => l.slice(4).split('=', 2)));
  const stages: { from: string; name?: string; lines: string[] }[] = [];
  for (const l of lines) {
    const m = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(l);
    if (m) stages.push({ from: m[1].replace(/\$\{(\w+)\}/g, (_x, n: string) => args[n] ?? ''), name: m[2], lines: [] });
    else stages.at(-1)?.lines.push(l);
  }
  const runtime = stages.at(-1)!;
  const all = (s: { lines: string[] }) => s.lines.join('\n');

  it('builds every stage on node:20-bookworm-slim', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(s.from === 'node:20-bookworm-slim' || stages.some((o) => o.name === s.from)).toBe(true);
  });

  it('compiles better-sqlite3 with python3/make/g++, then runs npm ci, npm run build and prunes dev dependencies', () => {
    const build = stages.slice(0, -1).map(all).join('\n');
    expect(build).toMatch(/apt-get install[^\n]*python3[^\n]*make[^\n]*g\+\+/);
    expect(build).toMatch(/npm ci\b/);
    expect(build).toMatch(/npm run build\b/);
    expect(build).toMatch(/npm prune --omit=dev\b/);
    // The compilers stay in the build stages.
    expect(all(runtime)).not.toMatch(/apt-get install/);
  });

  it('runs as a non-root user, with the CLI as entrypoint and the gateway as default command', () => {
    const users = runtime.lines.filter((l) => l.startsWith('USER '));
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.slice(5).split(':')[0];
    expect(['root', '0']).not.toContain(user);
    expect(user === 'node' || Number(user) > 0).toBe(true);
    const json = (prefix: string) => JSON.parse(runtime.lines.find((l) => l.startsWith(prefix))!.slice(prefix.length)) as string[];
    expect(json('ENTRYPOINT ')).toEqual(['node', 'apps/ctxmesh/dist/bin.js']);
    expect(json('CMD ')).toEqual(['serve', 'gateway']);
    // The entrypoint is the package's own bin, compiled from src/bin.ts.
    const pkg = JSON.parse(read('apps/ctxmesh/package.json')) as { bin: Record<string, string> };
    expect(`apps/ctxmesh/${pkg.bin.ctxmesh}`).toBe('apps/ctxmesh/dist/bin.js');
    expect(existsSync(join(ROOT, 'apps/ctxmesh/src/bin.ts'))).toBe(true);
  });

  it('makes only the data directory writable for the service user', () => {
    expect(all(runtime)).toMatch(/chown node:node \/data\b/);
    expect(all(runtime)).not.toMatch(/chown[^\n]*\/app\b/);
  });

  it('keeps host dependencies and build output out of the context (.dockerignore)', () => {
    const ignore = read('.dockerignore').split('\n').map((l) => l.trim());
    expect(ignore).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git']));
  });
});

describe('docker-compose.yml', () => {
  it('runs every service from the one image built by deploy/Dockerfile, as `ctxmesh serve <service>`', () => {
    const images = new Set(SERVICES.map((s) => interpolate(compose.services[s].image)));
    expect(images.size).toBe(1);
    expect([...images][0].split(':')[0]).toBe(IMAGE_REPO);
    for (const svc of SERVICES) {
      const s = compose.services[svc];
      expect(s.build.dockerfile).toBe('deploy/Dockerfile');
      expect(existsSync(join(ROOT, s.build.context, s.build.dockerfile))).toBe(true);
      expect(s.command).toEqual(['serve', svc]);
      expect(s.read_only).toBe(true);
    }
  });

  it('binds every service on all interfaces at its own port', () => {
    for (const svc of SERVICES) {
      const env = composeEnv(svc);
      expect([svc, env[`${envPrefix(svc)}_HOST`]]).toEqual([svc, '0.0.0.0']);
      expect(portOf(env, svc)).toBeGreaterThan(0);
    }
    expect(compose.services.gateway.ports).toContain('1933:1933');
    expect(portOf(composeEnv('gateway'), 'gateway')).toBe(1933);
  });

  it('sets only variables the service reads, with values its configuration accepts', () => {
    for (const svc of SERVICES) {
      const env = composeEnv(svc);
      for (const name of Object.keys(env)) expect([svc, name, accepts(svc, name)]).toEqual([svc, name, true]);
      expect(() => LOADERS[svc](env)).not.toThrow();
    }
  });

  it('points every *_ADDR and store URL at a compose service and the port it listens on', () => {
    for (const svc of SERVICES) {
      for (const [name, value] of Object.entries(composeEnv(svc))) {
        if (!isLink(name) || !value) continue;
        const { host, port } = hostPort(value);
        expect([svc, name, host in compose.services]).toEqual([svc, name, true]);
        if (name.endsWith('_ADDR')) {
          expect(`${envPrefix(host)}_ADDR`).toBe(name);
          expect([svc, name, portOf(composeEnv(host), host)]).toEqual([svc, name, port]);
        }
      }
    }
    expect(hostPort(composeEnv('ledger').REDIS_URL!)).toEqual({ host: 'redis', port: 6379 });
    expect(hostPort(composeEnv('indexer').NATS_URL!)).toEqual({ host: 'nats', port: 4222 });
    expect(hostPort(composeEnv('gather').QDRANT_URL!)).toEqual({ host: 'qdrant', port: 6333 });
  });

  it('waits for every dependency to be healthy, and every dependency has a health check', () => {
    for (const svc of SERVICES) {
      const deps = (compose.services[svc].depends_on ?? {}) as Record<string, { condition: string }>;
      const needed = Object.entries(composeEnv(svc)).filter(([n, v]) => isLink(n) && v).map(([, v]) => hostPort(v!).host);
      for (const host of needed) expect([svc, host, deps[host]?.condition]).toEqual([svc, host, 'service_healthy']);
      for (const [dep, d] of Object.entries(deps)) {
        expect(d.condition).toBe('service_healthy');
        expect([dep, Array.isArray(compose.services[dep]?.healthcheck?.test)]).toEqual([dep, true]);
      }
    }
    for (const infra of INFRA) expect(compose.services[infra].healthcheck.test.length).toBeGreaterThan(1);
  });

  it('probes gRPC readiness with `ctxmesh probe host:port`, and the gateway over HTTP', () => {
    for (const svc of SERVICES) {
      const target = svc === 'gateway' ? 'http://127.0.0.1:1933' : `127.0.0.1:${portOf(composeEnv(svc), svc)}`;
      expect(compose.services[svc].healthcheck.test).toEqual(['CMD', 'ctxmesh', 'probe', target]);
    }
  });

  it('configures every production store a service can use, so none falls back to an embedded file', () => {
    expect(SERVICES.flatMap((svc) => embeddedFallbacks(svc, composeEnv(svc)))).toEqual([]);
  });

  it('runs Qdrant as the vector store, NATS with JetStream and Redis for ledger and sessions', () => {
    expect(compose.services.qdrant.image).toMatch(/^qdrant\/qdrant:/);
    expect(compose.services.nats.image).toMatch(/^nats:2\b/);
    expect(compose.services.nats.command).toContain('-js');
    expect(compose.services.redis.image).toMatch(/^redis:/);
    for (const svc of ['gather', 'tier-reader', 'indexer']) expect(composeEnv(svc).CTXMESH_VECTOR).toBe('qdrant');
    for (const svc of ['ledger', 'sessions']) expect(composeEnv(svc).REDIS_URL).toBe('redis://redis:6379');
    expect(composeEnv('gateway').NATS_URL).toBe(composeEnv('indexer').NATS_URL);
  });

  it('gives a variable two services share the same value in both', () => {
    for (const a of SERVICES) {
      for (const b of SERVICES) {
        if (a >= b) continue;
        const ea = composeEnv(a);
        const eb = composeEnv(b);
        for (const name of Object.keys(ea)) {
          if (name in eb && KNOWN[a].has(name) && KNOWN[b].has(name)) expect([a, b, name, ea[name]]).toEqual([a, b, name, eb[name]]);
        }
      }
    }
  });
});

describe('deploy/k8s/base', () => {
  it('lists existing files only, and every ctxmesh service has a Deployment, a Service and a ServiceAccount of its name', () => {
    for (const svc of SERVICES) {
      const kinds = docsOf(join(K8S, 'base', `${svc}.yaml`)).map((o) => `${o.kind}/${o.metadata.name}`);
      expect(kinds.sort()).toEqual([`Deployment/${svc}`, `Service/${svc}`, `ServiceAccount/${svc}`]);
    }
    for (const infra of INFRA) {
      expect(existsSync(join(K8S, 'base', 'infra', `${infra}.yaml`))).toBe(true);
      expect(find(base.objects, 'StatefulSet', infra)).toBeDefined();
      expect(find(base.objects, 'Service', infra)).toBeDefined();
    }
  });

  it('runs the same image as compose, as `ctxmesh serve <service>` in a container named server', () => {
    for (const svc of SERVICES) {
      const d = find(base.objects, 'Deployment', svc);
      const containers = d.spec.template.spec.containers as Y[];
      expect(containers.map((c) => c.name)).toEqual(['server']);
      expect(containers[0].image.split(':')[0]).toBe(IMAGE_REPO);
      // The image's ENTRYPOINT stays; only the arguments change.
      expect(containers[0].command).toBeUndefined();
      expect(containers[0].args).toEqual(['serve', svc]);
    }
  });

  it('gives each service its own ServiceAccount and selects its own pods', () => {
    for (const svc of SERVICES) {
      const d = find(base.objects, 'Deployment', svc);
      const labels = d.spec.template.metadata.labels;
      expect(d.spec.template.spec.serviceAccountName).toBe(svc);
      expect(find(base.objects, 'ServiceAccount', svc)).toBeDefined();
      expect(matches(d.spec.selector.matchLabels, labels)).toBe(true);
      expect(matches(find(base.objects, 'Service', svc).spec.selector, labels)).toBe(true);
      for (const other of SERVICES.filter((o) => o !== svc)) {
        expect(matches(d.spec.selector.matchLabels, find(base.objects, 'Deployment', other).spec.template.metadata.labels)).toBe(false);
      }
    }
  });

  it('runs non-root with a read-only root filesystem, no privilege escalation and no capabilities', () => {
    for (const svc of SERVICES) {
      const pod = find(base.objects, 'Deployment', svc).spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      const sc = serverOf(find(base.objects, 'Deployment', svc)).securityContext;
      expect([svc, sc.readOnlyRootFilesystem, sc.allowPrivilegeEscalation, sc.capabilities.drop]).toEqual([svc, true, false, ['ALL']]);
    }
  });

  it('sets requests and limits for CPU and memory, requests within limits', () => {
    for (const svc of SERVICES) {
      const r = serverOf(find(base.objects, 'Deployment', svc)).resources;
      for (const k of ['cpu', 'memory']) {
        expect(quantity(r.requests[k])).toBeGreaterThan(0);
        expect(quantity(r.requests[k])).toBeLessThanOrEqual(quantity(r.limits[k]));
      }
    }
  });

  it('names gRPC ports grpc, probes readiness on health service "" and liveness on `liveness`', () => {
    for (const svc of SERVICES.filter((s) => s !== 'gateway')) {
      const c = serverOf(find(base.objects, 'Deployment', svc));
      const port = portOf(containerEnv(c), svc);
      expect(c.ports).toEqual([{ name: 'grpc', containerPort: port }]);
      expect(c.readinessProbe.grpc).toEqual({ port, service: '' });
      expect(c.livenessProbe.grpc).toEqual({ port, service: 'liveness' });
      const sp = find(base.objects, 'Service', svc).spec.ports as Y[];
      expect(sp.map((p) => [p.name, p.port, p.targetPort])).toEqual([['grpc', port, 'grpc']]);
    }
  });

  it('probes the gateway over HTTP: /ready?checks=orchestrator for readiness, /health for liveness', () => {
    const c = serverOf(find(base.objects, 'Deployment', 'gateway'));
    expect(c.ports).toEqual([{ name: 'http', containerPort: 1933 }]);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/ready?checks=orchestrator', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    const ops = read('services/gateway/src/routes/ops.ts');
    expect(ops).toMatch(/app\.get(<[^>]*>)?\('\/ready'/);
    // The probe's check name is one the gateway registers.
    expect(read('services/gateway/src/start.ts')).toContain("name: 'orchestrator'");
    expect(ops).toContain("app.get('/health'");
  });

  it('gives pods a termination grace of at least the longest request budget plus the drain', () => {
    const maxRequestMs = loadGatewayConfig(k8sEnv('gateway')).deadlines.maxMs;
    for (const svc of SERVICES) {
      const pod = find(base.objects, 'Deployment', svc).spec.template.spec;
      const preStop = pod.containers[0].lifecycle?.preStop?.exec?.command as string[] | undefined;
      const pauseMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
      expect([svc, pod.terminationGracePeriodSeconds * 1000 >= maxRequestMs + DRAIN_MS + pauseMs]).toEqual([svc, true]);
    }
  });

  it('sets only variables the service reads, with values its configuration accepts', () => {
    for (const svc of SERVICES) {
      const c = serverOf(find(base.objects, 'Deployment', svc));
      for (const name of [...Object.keys(containerEnv(c)), ...secretVars(c)]) expect([svc, name, accepts(svc, name)]).toEqual([svc, name, true]);
      expect(() => LOADERS[svc](containerEnv(c))).not.toThrow();
      expect(containerEnv(c)[`${envPrefix(svc)}_HOST`]).toBe('0.0.0.0');
    }
  });

  it('points every *_ADDR and store URL at a Service port that reaches the listening container', () => {
    for (const svc of SERVICES) {
      for (const [name, value] of Object.entries(k8sEnv(svc))) {
        if (!isLink(name)) continue;
        const { host, port } = hostPort(value!);
        const service = find(base.objects, 'Service', host);
        expect([svc, name, service !== undefined]).toEqual([svc, name, true]);
        const sp = (service.spec.ports as Y[]).find((p) => p.port === port);
        expect([svc, name, sp !== undefined]).toEqual([svc, name, true]);
        const workload = [...byKind(base.objects, 'Deployment'), ...byKind(base.objects, 'StatefulSet')].find((w) =>
          matches(service.spec.selector, w.spec.template.metadata.labels),
        );
        const containerPorts = (workload.spec.template.spec.containers as Y[]).flatMap((c) => c.ports as Y[]);
        expect(containerPorts.some((p) => p.name === sp.targetPort || p.containerPort === sp.targetPort)).toBe(true);
        if (name.endsWith('_ADDR')) {
          expect(`${envPrefix(host)}_ADDR`).toBe(name);
          expect(sp.name).toBe('grpc');
        }
      }
    }
  });

  it('configures every production store a service can use: the root filesystem is read-only', () => {
    expect(SERVICES.flatMap((svc) => embeddedFallbacks(svc, k8sEnv(svc)))).toEqual([]);
    for (const svc of SERVICES) {
      const mounts = (serverOf(find(base.objects, 'Deployment', svc)).volumeMounts ?? []) as Y[];
      expect(mounts.map((m) => m.mountPath)).toEqual(['/tmp']);
    }
  });

  it('sets the same variables to the same values as docker-compose.yml (secrets aside)', () => {
    for (const svc of SERVICES) {
      const secrets = secretVars(serverOf(find(base.objects, 'Deployment', svc)));
      const fromCompose = Object.fromEntries(Object.entries(composeEnv(svc)).filter(([k, v]) => v !== '' && !secrets.includes(k)));
      const settings = Object.fromEntries(Object.entries(k8sEnv(svc)).filter(([k]) => !(k in COMMON()) || k in fromCompose));
      expect([svc, settings]).toEqual([svc, fromCompose]);
      // A variable Kubernetes takes from a Secret is one compose reads from the shell.
      for (const k of secrets) expect([svc, k, k in composeEnv(svc)]).toEqual([svc, k, true]);
    }
  });

  it('keeps the stores non-root with a read-only root filesystem too', () => {
    for (const infra of INFRA) {
      const pod = find(base.objects, 'StatefulSet', infra).spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      for (const c of pod.containers as Y[]) {
        expect([infra, c.securityContext.readOnlyRootFilesystem, c.securityContext.allowPrivilegeEscalation]).toEqual([infra, true, false]);
        expect(c.resources.limits.memory).toBeDefined();
      }
    }
  });
});

describe('deploy/k8s kustomizations', () => {
  const all = [base, ...overlays, ...components];

  it('reference files and directories that exist', () => {
    for (const k of all) {
      for (const p of (k.spec.patches ?? []) as Y[]) if (p.path) expect(existsSync(resolve(k.dir, p.path))).toBe(true);
      for (const c of (k.spec.components ?? []) as string[]) {
        expect(parse(readFileSync(resolve(k.dir, c, 'kustomization.yaml'), 'utf8')).kind).toBe('Component');
      }
    }
    for (const c of components) expect(c.spec.kind).toBe('Component');
    expect(components.map((c) => c.dir.split('/').at(-1)).sort()).toEqual(['managed-redis', 'network-policies', 'otel-collector']);
  });

  it('patch only objects that exist, and set only variables the patched service reads', () => {
    for (const k of [...overlays, ...components]) {
      // A component patches what the overlay that includes it renders: the base, at least.
      const scope = [...base.objects, ...k.objects];
      for (const p of (k.spec.patches ?? []) as Y[]) {
        if (p.target) {
          const hits = scope.filter((o) => o.kind === p.target.kind && (!p.target.name || o.metadata.name === p.target.name) && labelSelectorMatches(p.target.labelSelector, o.metadata.labels));
          expect([k.dir, hits.length > 0]).toEqual([k.dir, true]);
          for (const op of parse(p.patch) as Y[]) {
            if (op.path === '/spec/template/spec/containers/0/env/-') {
              for (const o of hits) {
                expect(o.spec.template.spec.containers[0].name).toBe('server');
                expect([o.metadata.name, op.value.name, accepts(o.metadata.name, op.value.name)]).toEqual([o.metadata.name, op.value.name, true]);
              }
            }
          }
          continue;
        }
        const docs = p.path ? docsOf(resolve(k.dir, p.path)) : parseAllDocuments(p.patch).map((d) => d.toJS() as Y);
        for (const d of docs) {
          expect([k.dir, d.kind, d.metadata.name, find(scope, d.kind, d.metadata.name) !== undefined]).toEqual([k.dir, d.kind, d.metadata.name, true]);
          for (const c of (d.spec?.template?.spec?.containers ?? []) as Y[]) {
            if (!SERVICES.includes(d.metadata.name)) continue;
            expect(c.name).toBe('server');
            for (const e of (c.env ?? []) as Y[]) expect([d.metadata.name, e.name, accepts(d.metadata.name, e.name)]).toEqual([d.metadata.name, e.name, true]);
          }
        }
      }
      for (const r of (k.spec.replicas ?? []) as Y[]) {
        expect([r.name, byKind(scope, 'Deployment').concat(byKind(scope, 'StatefulSet')).some((w) => w.metadata.name === r.name)]).toEqual([r.name, true]);
      }
      const used = new Set([...base.objects, ...k.objects].flatMap((o) => ((o.spec?.template?.spec?.containers ?? []) as Y[]).map((c) => String(c.image).split(':')[0])));
      for (const i of (k.spec.images ?? []) as Y[]) expect([k.dir, i.name, used.has(i.name)]).toEqual([k.dir, i.name, true]);
    }
  });

  it('gives the overlays a namespace each', () => {
    const namespaces = overlays.map((o) => o.spec.namespace as string);
    expect(new Set(namespaces).size).toBe(2);
    for (const o of overlays) expect(find(o.objects, 'Namespace', o.spec.namespace)).toBeDefined();
  });
});

describe('deploy/k8s/overlays/prod', () => {
  const prod = overlays[1];
  const replicas = Object.fromEntries(((prod.spec.replicas ?? []) as Y[]).map((r) => [r.name, r.count as number]));

  it('runs at least two replicas of every service, each with an HPA and a PodDisruptionBudget', () => {
    for (const svc of SERVICES) {
      expect([svc, replicas[svc] >= 2]).toEqual([svc, true]);
      const hpa = find(prod.objects, 'HorizontalPodAutoscaler', svc);
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: svc });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
      expect(replicas[svc]).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
      const pdb = find(prod.objects, 'PodDisruptionBudget', svc);
      expect(matches(pdb.spec.selector.matchLabels, find(base.objects, 'Deployment', svc).spec.template.metadata.labels)).toBe(true);
    }
  });

  it('runs NATS and Qdrant as three-member clusters and Redis as a managed service', () => {
    expect(replicas.nats).toBe(3);
    expect(replicas.qdrant).toBe(3);
    const natsArgs = (docsOf(resolve(prod.dir, 'nats-cluster.yaml'))[0].spec.template.spec.containers[0].args as string[]).join(' ');
    for (const i of [0, 1, 2]) expect(natsArgs).toContain(`nats-${i}.nats-headless:6222`);
    expect(natsArgs).toContain('-js');
    const qdrant = docsOf(resolve(prod.dir, 'qdrant-cluster.yaml'))[0].spec.template.spec.containers[0];
    expect(literalEnv(qdrant).QDRANT__CLUSTER__ENABLED).toBe('true');
    expect(Number(literalEnv(qdrant).QDRANT__STORAGE__COLLECTION__REPLICATION_FACTOR)).toBeGreaterThanOrEqual(2);
    expect(prod.spec.components).toContain('../../components/managed-redis');
  });
});

describe('deploy/k8s/components', () => {
  const comp = (name: string) => components.find((c) => c.dir.endsWith(`/${name}`))!;

  it('managed-redis removes the in-cluster Redis and gives its clients the URL from a Secret', () => {
    const k = comp('managed-redis');
    const deleted = ((k.spec.patches ?? []) as Y[]).filter((p) => p.patch?.includes('$patch: delete')).map((p) => parse(p.patch) as Y);
    expect(deleted.map((d) => `${d.kind}/${d.metadata.name}`).sort()).toEqual(['Service/redis', 'ServiceAccount/redis', 'StatefulSet/redis']);
    // Every service that had the in-cluster URL gets the secret instead.
    const clients = SERVICES.filter((s) => k8sEnv(s).REDIS_URL !== undefined);
    const patched = docsOf(resolve(k.dir, 'redis-url.yaml'));
    expect(patched.map((d) => d.metadata.name).sort()).toEqual(clients.sort());
    for (const d of patched) {
      const e = (d.spec.template.spec.containers[0].env as Y[]).find((x) => x.name === 'REDIS_URL');
      expect(e.value).toBeUndefined();
      expect(e.valueFrom.secretKeyRef).toEqual({ name: 'ctxmesh-secrets', key: 'REDIS_URL' });
    }
    // …and the in-cluster URL leaves their settings.
    const removed = ((k.spec.patches ?? []) as Y[]).filter((p) => p.target?.kind === 'ConfigMap').map((p) => [p.target.name, (parse(p.patch) as Y[])[0]]);
    expect(removed.sort()).toEqual(clients.sort().map((c) => [`${c}-config`, { op: 'remove', path: '/data/REDIS_URL' }]));
  });

  it('network-policies allow every call the mesh makes, and deny ingress by default', () => {
    const policies = byKind([...comp('network-policies').objects, ...comp('otel-collector').objects], 'NetworkPolicy');
    const deny = policies.find((p) => Object.keys(p.spec.podSelector).length === 0);
    expect(deny.spec.policyTypes).toEqual(['Ingress']);
    expect(deny.spec.ingress).toBeUndefined();
    const workloads = [...byKind(base.objects, 'Deployment'), ...byKind(base.objects, 'StatefulSet'), ...byKind(comp('otel-collector').objects, 'Deployment')];
    const podLabels = (name: string) => workloads.find((w) => matches(find([...base.objects, ...comp('otel-collector').objects], 'Service', name)?.spec.selector, w.spec.template.metadata.labels))?.spec.template.metadata.labels;
    const allowed = (from: string, to: string, port: number) =>
      policies.some(
        (p) =>
          matches(p.spec.podSelector.matchLabels, podLabels(to)) &&
          ((p.spec.ingress ?? []) as Y[]).some(
            (rule) =>
              (rule.from === undefined || (rule.from as Y[]).some((f) => matches(f.podSelector?.matchLabels, find(base.objects, 'Deployment', from).spec.template.metadata.labels))) &&
              (rule.ports === undefined || (rule.ports as Y[]).some((rp) => rp.port === port || rp.port === containerPortOf(to, port))),
          ),
      );
    const containerPortOf = (service: string, port: number) =>
      (find([...base.objects, ...comp('otel-collector').objects], 'Service', service)?.spec.ports as Y[] | undefined)?.find((p) => p.port === port)?.targetPort;
    let edges = 0;
    for (const svc of SERVICES) {
      const env = { ...k8sEnv(svc), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' };
      for (const [name, value] of Object.entries(env)) {
        if (!isLink(name)) continue;
        const { host, port } = hostPort(value!);
        expect([svc, name, allowed(svc, host, port)]).toEqual([svc, name, true]);
        edges++;
      }
    }
    expect(edges).toBeGreaterThan(SERVICES.length);
    // And nothing else: the ledger may not reach the orchestrator, nor gather reach Redis.
    expect(allowed('ledger', 'orchestrator', 50061)).toBe(false);
    expect(allowed('gather', 'redis', 6379)).toBe(false);
  });

  it('otel-collector sends every server’s traces to a collector Service that listens on OTLP/HTTP', () => {
    const k = comp('otel-collector');
    const svc = find(k.objects, 'Service', 'otel-collector');
    const merge = ((k.spec.configMapGenerator ?? []) as Y[]).find((g) => g.name === 'ctxmesh-common');
    expect(merge.behavior).toBe('merge');
    const endpoint = generatorData(k.dir, merge).OTEL_EXPORTER_OTLP_ENDPOINT;
    const { host, port } = hostPort(endpoint);
    expect(host).toBe(svc.metadata.name);
    expect((svc.spec.ports as Y[]).some((p) => p.port === port)).toBe(true);
    // Every ctxmesh server reads the shared settings.
    for (const d of byKind(base.objects, 'Deployment')) expect([d.metadata.name, envFromMaps(serverOf(d), base.objects)[0].metadata.name]).toEqual([d.metadata.name, 'ctxmesh-common']);
  });
});

describe('deploy/README.md', () => {
  const readme = read('deploy/README.md');
  const section = (svc: string) => {
    const start = readme.indexOf(`\n### ${svc}\n`);
    expect([svc, start >= 0]).toEqual([svc, true]);
    const end = readme.indexOf('\n#', start + 5);
    return readme.slice(start, end < 0 ? undefined : end);
  };

  it('documents exactly the variables each service reads', () => {
    for (const svc of SERVICES) {
      const documented = section(svc)
        .split('\n')
        .filter((l) => l.startsWith('| `'))
        .map((l) => /^\| `([A-Z0-9_]+)`/.exec(l)![1]);
      const mainOnly = [...new Set([...Object.keys(k8sEnv(svc)), ...Object.keys(composeEnv(svc))])].filter((n) => !KNOWN[svc].has(n) && !(n in PROCESS_VARS) && accepts(svc, n));
      expect([svc, [...documented].sort()]).toEqual([svc, [...new Set([...KNOWN[svc], ...mainOnly])].sort()]);
    }
  });

  it('explains how to run compose and kustomize', () => {
    expect(readme).toContain('docker compose up');
    expect(readme).toContain('kubectl apply -k deploy/k8s/overlays/dev');
    expect(readme).toContain('kubectl apply -k deploy/k8s/overlays/prod');
  });
});

/** `a=b,c=d` label selector (equality terms only) against labels. */
function labelSelectorMatches(selector: string | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return labels?.[k.trim()] === v.trim();
  });
}
