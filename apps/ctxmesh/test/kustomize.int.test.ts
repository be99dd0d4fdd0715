/**
 * Both overlays rendered by `kubectl kustomize`, as an operator applies them, and held to
 * what an operator expects (issue 14 item 6): settings in ConfigMaps (env from them), secrets
 * only from a secretGenerator, Qdrant behind an API key, an Ingress for the gateway in prod,
 * topology spread on every Deployment, images set by Kustomize `images:`. The raw manifests
 * are checked against the services' configuration in src/deploy.test.ts; this file checks the
 * rendered objects. kubectl is required: `.ci/run` installs it where it is missing.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadGatewayConfig } from '@ctxmesh/gateway';
import { LOADERS, SERVICES as SERVICE_NAMES, type Env } from '../src/__tests__/service-configs';

// Rendered YAML is untyped by nature; the checks below give it a shape.
type Y = any;

const ROOT = resolve(__dirname, '../../..');
const K8S = join(ROOT, 'deploy', 'k8s');
const SERVICES = [...SERVICE_NAMES];
/** kustomize's generator suffix: a dash and ten characters of a content hash. */
const HASHED = /-[a-z0-9]{10}$/;

function kubectl(): string {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/local/bin']) {
    if (dir && existsSync(join(dir, 'kubectl'))) return join(dir, 'kubectl');
  }
  throw new Error('kubectl is not installed: the overlays cannot be rendered (`.ci/run` installs it; or `apt-get install -y kubectl`)');
}

interface Rendered {
  name: 'dev' | 'prod';
  spec: Y;
  objects: Y[];
}

let work: string;
const rendered: Rendered[] = [];

beforeAll(() => {
  const bin = kubectl();
  // A copy, so prod renders as an operator's checkout would after `cp secrets.env.example secrets.env`.
  work = mkdtempSync(join(tmpdir(), 'ctxmesh-k8s-'));
  cpSync(K8S, join(work, 'k8s'), { recursive: true });
  copyFileSync(join(work, 'k8s/overlays/prod/secrets.env.example'), join(work, 'k8s/overlays/prod/secrets.env'));
  for (const name of ['dev', 'prod'] as const) {
    const dir = join(work, 'k8s/overlays', name);
    const text = execFileSync(bin, ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const objects = parseAllDocuments(text).map((d) => d.toJS() as Y).filter(Boolean);
    rendered.push({ name, spec: parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')), objects });
  }
}, 60_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const of = (r: Rendered, kind: string) => r.objects.filter((o) => o.kind === kind);
const get = (r: Rendered, kind: string, name: string): Y => r.objects.find((o) => o.kind === kind && o.metadata.name === name);
const workloads = (r: Rendered) => [...of(r, 'Deployment'), ...of(r, 'StatefulSet')];
const containers = (w: Y): Y[] => [...((w.spec.template.spec.initContainers ?? []) as Y[]), ...(w.spec.template.spec.containers as Y[])];
const server = (r: Rendered, svc: string): Y => (get(r, 'Deployment', svc).spec.template.spec.containers as Y[]).find((c) => c.name === 'server');
const secretValue = (r: Rendered, ref: { name: string; key: string }): string | undefined => {
  const s = get(r, 'Secret', ref.name);
  return s?.data?.[ref.key] === undefined ? undefined : Buffer.from(s.data[ref.key], 'base64').toString('utf8');
};

/** The environment a container starts with: envFrom ConfigMaps in order, then env (ConfigMap and Secret refs resolved). */
function startEnv(r: Rendered, c: Y): Env {
  const env: Env = {};
  for (const f of (c.envFrom ?? []) as Y[]) Object.assign(env, get(r, 'ConfigMap', f.configMapRef.name).data);
  for (const e of (c.env ?? []) as Y[]) {
    if (e.value !== undefined) env[e.name] = String(e.value);
    else if (e.valueFrom?.secretKeyRef) env[e.name] = secretValue(r, e.valueFrom.secretKeyRef);
    else if (e.valueFrom?.configMapKeyRef) env[e.name] = get(r, 'ConfigMap', e.valueFrom.configMapKeyRef.name)?.data?.[e.valueFrom.configMapKeyRef.key];
  }
  return env;
}

/** Every `*.yaml` under deploy/k8s (the sources, not the render). */
function sources(dir = K8S): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.yaml') ? [p] : [];
  });
}

describe.each(['dev', 'prod'] as const)('kubectl kustomize deploy/k8s/overlays/%s', (name) => {
  const r = () => rendered.find((x) => x.name === name)!;

  it('renders every service, the stores, and nothing outside the overlay namespace', () => {
    expect(of(r(), 'Deployment').map((d) => d.metadata.name).filter((n) => SERVICES.includes(n)).sort()).toEqual(SERVICES);
    for (const o of r().objects) if (!['Namespace'].includes(o.kind)) expect([o.kind, o.metadata.name, o.metadata.namespace]).toEqual([o.kind, o.metadata.name, r().spec.namespace]);
  });

  it('takes every setting of a service from ConfigMaps (envFrom) and only secrets from env', () => {
    for (const svc of SERVICES) {
      const c = server(r(), svc);
      const refs = ((c.envFrom ?? []) as Y[]).map((f) => f.configMapRef?.name as string);
      expect([svc, refs.length]).toEqual([svc, 2]);
      for (const ref of refs) {
        // A generated name: a changed setting is a new ConfigMap, so the pods roll.
        expect([svc, ref, HASHED.test(ref), get(r(), 'ConfigMap', ref) !== undefined]).toEqual([svc, ref, true, true]);
      }
      for (const e of (c.env ?? []) as Y[]) expect([svc, e.name, e.value, e.valueFrom?.secretKeyRef !== undefined]).toEqual([svc, e.name, undefined, true]);
      // What the pod starts with is a configuration the service accepts.
      expect(() => LOADERS[svc](startEnv(r(), c))).not.toThrow();
    }
  });

  it('generates every Secret (none is written by hand) and every secret reference resolves', () => {
    for (const file of sources()) {
      for (const d of parseAllDocuments(readFileSync(file, 'utf8'))) expect([file, (d.toJS() as Y)?.kind]).not.toEqual([file, 'Secret']);
    }
    const secrets = of(r(), 'Secret');
    expect(secrets.length).toBeGreaterThan(0);
    for (const s of secrets) expect([s.metadata.name, HASHED.test(s.metadata.name)]).toEqual([s.metadata.name, true]);
    for (const w of workloads(r())) {
      for (const c of containers(w)) {
        for (const e of (c.env ?? []) as Y[]) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) expect([w.metadata.name, e.name, secretValue(r(), ref) !== undefined]).toEqual([w.metadata.name, e.name, true]);
        }
      }
    }
  });

  it('runs Qdrant with an API key, and every Qdrant client sends that same key', () => {
    const q = (get(r(), 'StatefulSet', 'qdrant').spec.template.spec.containers as Y[]).find((c) => c.name === 'qdrant');
    const key = (q.env as Y[]).find((e) => e.name === 'QDRANT__SERVICE__API_KEY');
    expect(key?.valueFrom?.secretKeyRef).toBeDefined();
    expect((secretValue(r(), key.valueFrom.secretKeyRef) ?? '').length).toBeGreaterThanOrEqual(16);
    const clients = SERVICES.filter((svc) => startEnv(r(), server(r(), svc)).QDRANT_URL !== undefined);
    expect(clients.sort()).toEqual(['gather', 'indexer', 'tier-reader']);
    for (const svc of clients) {
      const e = (server(r(), svc).env as Y[]).find((x) => x.name === 'QDRANT_API_KEY');
      expect([svc, e?.valueFrom?.secretKeyRef]).toEqual([svc, key.valueFrom.secretKeyRef]);
    }
  });

  it('spreads every Deployment over nodes and zones, selecting its own pods', () => {
    for (const d of of(r(), 'Deployment')) {
      const spread = (d.spec.template.spec.topologySpreadConstraints ?? []) as Y[];
      expect([d.metadata.name, spread.map((t) => t.topologyKey).sort()]).toEqual([d.metadata.name, ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']]);
      for (const t of spread) {
        const labels = d.spec.template.metadata.labels;
        expect(Object.entries(t.labelSelector.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v)).toBe(true);
        expect(t.maxSkew).toBeGreaterThanOrEqual(1);
      }
    }
  });

  it('sets every image through Kustomize `images:` to a pinned tag', () => {
    // Every images entry of the overlay, the base and the overlay's components, the overlay's winning.
    const chain = [join(K8S, 'base'), ...((r().spec.components ?? []) as string[]).map((c) => resolve(K8S, 'overlays', name, c)), join(K8S, 'overlays', name)];
    const want = new Map<string, string>();
    for (const dir of chain) {
      for (const i of (parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')).images ?? []) as Y[]) want.set(i.name, `${i.newName ?? want.get(i.name)?.split(':')[0] ?? i.name}:${i.newTag}`);
    }
    const images = new Set(workloads(r()).flatMap((w) => containers(w).map((c) => c.image as string)));
    for (const image of images) {
      expect([image, [...want.values()].includes(image)]).toEqual([image, true]);
      expect(image).not.toMatch(/:latest$/);
    }
    // And in the sources, no ctxmesh server names a tag: the overlay decides it.
    for (const svc of SERVICES) expect(readFileSync(join(K8S, 'base', `${svc}.yaml`), 'utf8')).toMatch(/image: ctxmesh\n/);
    const ctxmesh = new Set(SERVICES.map((svc) => server(r(), svc).image));
    expect([...ctxmesh]).toEqual([name === 'prod' ? 'registry.example.com/ctxmesh:0.1.0' : 'ctxmesh:dev']);
  });
});

describe('kubectl kustomize deploy/k8s/overlays/prod', () => {
  const prod = () => rendered.find((x) => x.name === 'prod')!;

  it('exposes the gateway through an Ingress with TLS, to a Service port that reaches the container', () => {
    const ingresses = of(prod(), 'Ingress');
    expect(ingresses).toHaveLength(1);
    const ing = ingresses[0];
    expect(ing.spec.tls?.[0]?.secretName).toBeDefined();
    const backends = (ing.spec.rules as Y[]).flatMap((rule) => (rule.http.paths as Y[]).map((p) => p.backend.service));
    expect(backends).toEqual([{ name: 'gateway', port: { name: 'http' } }]);
    const svc = get(prod(), 'Service', 'gateway');
    const port = (svc.spec.ports as Y[]).find((p) => p.name === 'http');
    expect(port).toBeDefined();
    const container = server(prod(), 'gateway');
    expect((container.ports as Y[]).some((p) => p.name === port.targetPort || p.containerPort === port.targetPort)).toBe(true);
    // The network policies let the ingress controller reach it.
    const np = get(prod(), 'NetworkPolicy', 'gateway');
    expect((np.spec.ingress as Y[]).some((rule) => rule.from === undefined && (rule.ports as Y[]).some((p) => p.port === port.port || p.port === 1933))).toBe(true);
  });

  it('runs the gateway in api_key mode with the key table from the generated Secret', () => {
    const env = startEnv(prod(), server(prod(), 'gateway'));
    expect(env.CTXMESH_AUTH_MODE).toBe('api_key');
    expect(loadGatewayConfig(env)).toMatchObject({ auth: { mode: 'api_key' } });
  });

  it('uses the managed Redis URL from the Secret, and no in-cluster Redis is left', () => {
    for (const svc of ['ledger', 'sessions']) {
      expect(startEnv(prod(), server(prod(), svc)).REDIS_URL).toMatch(/^rediss:\/\//);
      for (const f of server(prod(), svc).envFrom as Y[]) expect(get(prod(), 'ConfigMap', f.configMapRef.name).data.REDIS_URL).toBeUndefined();
    }
    expect(get(prod(), 'StatefulSet', 'redis')).toBeUndefined();
  });

  it('sends traces to the collector through the shared settings', () => {
    for (const svc of SERVICES) expect(startEnv(prod(), server(prod(), svc)).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector:4318');
  });
});

describe('kubectl kustomize deploy/k8s/overlays/dev', () => {
  it('logs at debug through the shared settings, and keeps the in-cluster stores', () => {
    const dev = rendered.find((x) => x.name === 'dev')!;
    for (const svc of SERVICES) expect(startEnv(dev, server(dev, svc)).LOG_LEVEL).toBe('debug');
    expect(get(dev, 'StatefulSet', 'redis')).toBeDefined();
    expect(of(dev, 'Ingress')).toEqual([]);
  });
});
