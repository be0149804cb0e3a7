import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderChart } from '../support/chart-render.js';

/**
 * deploy/helm/guestwifi (issue 24 item 1). No `helm` can be had here, so the
 * templates are rendered by test/support/chart-render.ts (the subset of Go
 * templates the chart uses; anything else throws), and every rendered manifest
 * is validated against the Kubernetes API's JSON schemas (kubernetes-models,
 * Kubernetes 1.27). What helm itself would add (its own rendering, lint,
 * `helm install --dry-run` against a cluster) is not checked here.
 */
const CHART = join(import.meta.dirname, '..', '..', 'deploy', 'helm', 'guestwifi');
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment, 'policy/v1/PodDisruptionBudget': PodDisruptionBudget, 'v1/Secret': Secret, 'v1/Service': Service,
};

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: any };

function manifests(overrides: Record<string, unknown> = {}): Manifest[] {
  const out: Manifest[] = [];
  for (const [file, text] of renderChart(CHART, 'wifi', overrides)) {
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}\n${text}`);
      const m = doc.toJS() as Manifest | null;
      if (m) out.push(m);
    }
  }
  return out;
}

const byKind = (ms: Manifest[], kind: string, name?: string): Manifest => {
  const m = ms.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!m) throw new Error(`no ${kind} ${name ?? ''}`);
  return m;
};

describe('the Helm chart', () => {
  it('renders manifests that validate against the Kubernetes schemas', () => {
    const ms = manifests();
    expect(ms.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(
      ['Deployment/wifi', 'PodDisruptionBudget/wifi', 'Secret/wifi-env', 'Service/wifi-http', 'Service/wifi-radius']);
    for (const m of ms) {
      const Model = MODELS[`${m.apiVersion}/${m.kind}`];
      expect(Model, `${m.apiVersion} ${m.kind}`).toBeDefined();
      expect(() => new Model!(m as never).validate(), `${m.kind} ${m.metadata.name}`).not.toThrow();
    }
  });

  it('the schema check bites: a Deployment whose containerPort is not a number is refused', () => {
    const d = structuredClone(byKind(manifests(), 'Deployment'));
    d.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => new Deployment(d as never).validate()).toThrow();
  });

  it('probes /healthz and /readyz, runs as the image user without privileges, takes its settings from the Secret', () => {
    const ms = manifests();
    const pod = byKind(ms, 'Deployment').spec.template.spec;
    const c = pod.containers[0];
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(c.envFrom).toEqual([{ secretRef: { name: 'wifi-env' } }]);
    expect(Object.keys(byKind(ms, 'Secret').stringData)).toEqual(expect.arrayContaining(['REDIS_URL', 'DATABASE_URL', 'JWT_SECRET']));
  });

  it('a UDP Service for 1812/1813 keeping the NAS source address, an HTTP Service, and a PodDisruptionBudget on the same pods', () => {
    const ms = manifests();
    const d = byKind(ms, 'Deployment');
    const labels = d.spec.template.metadata.labels;
    const named = new Map(d.spec.template.spec.containers[0].ports.map((p: { name: string; protocol: string }) => [p.name, p.protocol]));
    const radius = byKind(ms, 'Service', 'wifi-radius');
    expect(radius.spec.ports.map((p: { port: number; protocol: string }) => `${p.port}/${p.protocol}`)).toEqual(['1812/UDP', '1813/UDP']);
    expect(radius.spec.externalTrafficPolicy).toBe('Local');
    const http = byKind(ms, 'Service', 'wifi-http');
    for (const svc of [radius, http]) {
      expect(svc.spec.selector).toEqual(labels);
      for (const p of svc.spec.ports) expect(named.get(p.targetPort), `${svc.metadata.name} ${p.targetPort}`).toBe(p.protocol);
    }
    const pdb = byKind(ms, 'PodDisruptionBudget');
    expect(pdb.spec.selector.matchLabels).toEqual(labels);
    expect(pdb.spec.minAvailable).toBeLessThan(d.spec.replicas);
  });

  it('an existing Secret replaces the chart\'s; the budget can be left out', () => {
    const ms = manifests({ existingSecret: 'guestwifi-prod', podDisruptionBudget: { enabled: false } });
    expect(ms.map((m) => m.kind).sort()).toEqual(['Deployment', 'Service', 'Service']);
    expect(byKind(ms, 'Deployment').spec.template.spec.containers[0].envFrom).toEqual([{ secretRef: { name: 'guestwifi-prod' } }]);
  });
});
