import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Service } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { renderChart } from '../support/chart-render.js';

/**
 * RadSec's 2083/tcp in the deploy files (issue 24, docs/radsec.md): the Helm
 * chart (a TCP Service of its own, the container port, RADSEC_* naming files
 * of a mounted Secret), the image's EXPOSE, compose.yaml's published port and
 * the systemd unit's credentials. The chart is rendered and validated as in
 * test/unit/helm-chart.test.ts.
 */
const root = join(import.meta.dirname, '..', '..');
const CHART = join(root, 'deploy', 'helm', 'guestwifi');
type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: any };

function manifests(overrides: Record<string, unknown> = {}): Manifest[] {
  return [...renderChart(CHART, 'wifi', overrides).values()]
    .flatMap((text) => parseAllDocuments(text).map((d) => d.toJS() as Manifest | null))
    .filter((m): m is Manifest => m !== null);
}

const dir = mkdtempSync(join(tmpdir(), 'gw-radsec-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('RadSec in the deploy files', () => {
  it('the chart leaves RadSec out by default: no Service, port, setting or volume of it', () => {
    const ms = manifests();
    expect(ms.map((m) => m.metadata.name)).not.toContain('wifi-radsec');
    const text = JSON.stringify(ms);
    expect(text).not.toContain('RADSEC_');
    expect(text).not.toContain('2083');
  });

  it('enabled, the chart serves 2083/tcp from a Service of its own keeping the NAS address, and RADSEC_* name the mounted Secret\'s files', () => {
    const ms = manifests({ radsec: { enabled: true, secretName: 'venue-radsec' } });
    const d = ms.find((m) => m.kind === 'Deployment')!;
    const svc = ms.find((m) => m.kind === 'Service' && m.metadata.name === 'wifi-radsec')!;
    expect(svc, 'the RadSec Service').toBeDefined();
    for (const m of [d, svc]) expect(() => new (m.kind === 'Service' ? Service : Deployment)(m as never).validate(), m.metadata.name).not.toThrow();

    const pod = d.spec.template.spec;
    const c = pod.containers[0];
    expect(svc.spec.ports).toEqual([{ name: 'radsec', port: 2083, targetPort: 'radsec', protocol: 'TCP' }]);
    expect(svc.spec.externalTrafficPolicy).toBe('Local');
    expect(svc.spec.selector).toEqual(d.spec.template.metadata.labels);
    expect(c.ports).toContainEqual({ name: 'radsec', containerPort: 2083, protocol: 'TCP' });

    const env = Object.fromEntries(c.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    expect(env.RADSEC_PORT).toBe('2083');
    const mount = c.volumeMounts.find((v: { name: string }) => v.name === 'radsec');
    expect(mount).toMatchObject({ readOnly: true });
    for (const [k, file] of [['RADSEC_CERT_FILE', 'tls.crt'], ['RADSEC_KEY_FILE', 'tls.key'], ['RADSEC_CA_FILE', 'ca.crt']]) {
      expect(env[k!]).toBe(`${mount.mountPath}/${file}`);
    }
    const volume = pod.volumes.find((v: { name: string }) => v.name === 'radsec');
    expect(volume.secret).toEqual({ secretName: 'venue-radsec', defaultMode: 0o440 });
    // The key is group-readable only: the pod's group must own the mounted files.
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup);
  });

  it('the image exposes 2083/tcp and compose.yaml publishes it beside the RADSEC_* it documents', () => {
    const expose = readFileSync(join(root, 'Dockerfile'), 'utf8').split('\n').filter((l) => l.startsWith('EXPOSE '));
    expect(expose.join(' ').split(/\s+/)).toContain('2083/tcp');
    const composeText = readFileSync(join(root, 'compose.yaml'), 'utf8');
    const compose = parse(composeText) as { services: Record<string, { ports: string[] }> };
    expect(compose.services.guestwifi!.ports).toContain('2083:2083/tcp');
    for (const k of ['RADSEC_CERT_FILE', 'RADSEC_KEY_FILE', 'RADSEC_CA_FILE']) expect(composeText).toContain(`# ${k}: /etc/guestwifi/radsec/`);
    // Uncommented as the file says, it still parses and names the files in the mounted folder.
    const on = parse(composeText.replace(/^( {6})# (RADSEC_\w+: )/gm, '$1$2').replace(/^( {4})# (volumes: )/m, '$1$2')) as { services: Record<string, any> };
    expect(on.services.guestwifi.environment.RADSEC_KEY_FILE).toBe('/etc/guestwifi/radsec/tls.key');
    expect(on.services.guestwifi.volumes).toEqual(['./radsec:/etc/guestwifi/radsec:ro']);
  });

  it('the systemd unit\'s RadSec lines, uncommented, pass systemd-analyze verify', () => {
    const unit = readFileSync(join(root, 'deploy', 'systemd', 'guestwifi.service'), 'utf8');
    expect(unit).toContain('2083/tcp');
    const on = unit.replace(/^#(LoadCredential=radsec-|Environment=RADSEC_)/gm, '$1').replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `);
    expect(on.match(/^LoadCredential=radsec-/gm)).toHaveLength(3);
    expect(on).toMatch(/^Environment=RADSEC_CERT_FILE=%d\/radsec-cert RADSEC_KEY_FILE=%d\/radsec-key RADSEC_CA_FILE=%d\/radsec-ca$/m);
    const file = join(dir, 'guestwifi.service');
    writeFileSync(file, on);
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', cwd: dir });
    if (r.error) throw new Error(`systemd-analyze did not run (${r.error.message}); Debian: apt-get install systemd`);
    expect(`${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes('guestwifi.service'))).toEqual([]);
    expect(r.status).toBe(0);
  });
});
