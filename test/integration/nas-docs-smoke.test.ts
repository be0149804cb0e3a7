import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { call, dashed, macs, newTenant, type Running, startService } from '../support/fixture.js';

/**
 * docs/nas/: every gateway page's radclient smoke test, run as written
 * against a running service (FreeRADIUS's radclient, installed by the global
 * setup, decodes the answer with FreeRADIUS's own dictionaries), after the
 * page's own registration request. A page whose commands or expected answers
 * drift from what the service does fails here.
 *
 * radclient sends from 127.0.0.1 (no test file registers it otherwise), so the
 * pages' NASes are told apart there by the NAS-Identifier each smoke test sends.
 */
interface Page { file: string; register: Record<string, unknown>; smokes: { command: string; expects: string[] }[] }

const FENCE = /```sh\n([\s\S]*?)```/g;

function readPage(file: string): Page {
  const text = readFileSync(projectPath('docs', 'nas', file), 'utf8');
  const blocks = [...text.matchAll(FENCE)].map((m) => m[1]!);
  const reg = blocks.find((b) => b.includes('/nas-clients'));
  const body = reg?.match(/-d '(\{[^']*\})'/)?.[1];
  const smokes = blocks.filter((b) => /\bradclient\b/.test(b)).map((b) => ({
    command: b.split('\n').filter((l) => !l.startsWith('#')).join('\n').replace(/\\\n/g, ' ').trim(),
    expects: b.split('\n').filter((l) => l.startsWith('# expect: ')).map((l) => l.slice('# expect: '.length)),
  }));
  return { file, register: body ? JSON.parse(body) as Record<string, unknown> : {}, smokes };
}

function sh(command: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', command], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: stdout + stderr });
    });
  });
}

describe('docs/nas: each gateway page registers its NAS and passes its radclient smoke test', () => {
  const pages = readdirSync(projectPath('docs', 'nas')).filter((f) => f.endsWith('.md') && f !== 'README.md').sort().map(readPage);
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const code = `DOCS-${randomBytes(4).toString('hex').toUpperCase()}`;
  const device = macs();

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '1', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    t = await newTenant(svc.service, 'Docs Venue');
    const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null, bandwidth_down_mbps: 10, bandwidth_up_mbps: 2 } });
    expect(v.status).toBe(201);
  });
  afterAll(async () => { await svc?.stop(); });

  it('there is a page per gateway of issue 24, each with a registration and a smoke test', () => {
    expect(pages.map((p) => p.file)).toEqual(['aruba.md', 'cisco-9800.md', 'coovachilli.md', 'mikrotik.md', 'opennds.md', 'unifi.md']);
    for (const p of pages) {
      expect(Object.keys(p.register), p.file).toContain('nas_type');
      expect(p.smokes.length, p.file).toBeGreaterThan(0);
      for (const s of p.smokes) expect(s.expects.length, p.file).toBeGreaterThan(0);
    }
  });

  for (const file of ['aruba.md', 'cisco-9800.md', 'coovachilli.md', 'mikrotik.md', 'opennds.md', 'unifi.md']) {
    it(file, async () => {
      const page = pages.find((p) => p.file === file)!;
      const secret = `docs-${randomBytes(10).toString('hex')}`;
      for (const smoke of page.smokes) {
        const ident = smoke.command.match(/NAS-Identifier = \\?"([^"\\]+)\\?"/)?.[1];
        expect(ident, `${file}: its smoke test names the NAS-Identifier`).toBeDefined();
        const listed = await call(svc.base, 'GET', `/v1/hotspots/${t.hotspotId}/nas-clients`, { auth: t.apiKey });
        if (!(listed.body.data as { nas_identifier: string }[]).some((n) => n.nas_identifier === ident)) {
          const r = await call(svc.base, 'POST', `/v1/hotspots/${t.hotspotId}/nas-clients`, {
            auth: t.apiKey, body: { ...page.register, ip: '127.0.0.1', secret, nas_identifier: ident },
          });
          expect([file, r.status, r.body.error]).toEqual([file, 201, undefined]);
          await svc.service.engine.nas.refresh();
        }
        const command = smoke.command
          .replaceAll('radius.example.net:1812', `127.0.0.1:${svc.service.radiusPorts.auth}`)
          .replaceAll('radius.example.net:1813', `127.0.0.1:${svc.service.radiusPorts.acct}`)
          .replaceAll('the-nas-secret', secret)
          .replaceAll('VOUCHER-CODE', code)
          .replaceAll('02-00-5E-10-00-01', dashed(device()));
        expect(command, `${file}: only the documented placeholders`).not.toMatch(/example\.net|the-nas-secret/);
        const r = await sh(command);
        for (const e of smoke.expects) expect(r.out, `${file}: ${command}`).toContain(e);
        expect(r.code, r.out).toBe(0);
      }
    });
  }
});
