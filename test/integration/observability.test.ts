import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, inject } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { checkFraming, Code } from '../../radius/index.js';
import { TestNas, accessRequest, accountingRequest } from '../radius/helpers.js';
import { call, newTenant, serviceTest, until } from '../support/fixture.js';
import { addLoopbackNas } from '../support/loopback-nas.js';

/**
 * Issue 24 item 3: Prometheus metrics as the ecosystem reads them (prom-client,
 * guestwifi_ names, histograms, the process metrics, worker threads' metrics
 * summed in), the Grafana dashboard and alert rules checked against what
 * /metrics really has, and a request id on every answer.
 */
const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DASHBOARD = projectPath('deploy', 'grafana', 'guestwifi-dashboard.json');
const ALERTS = projectPath('deploy', 'prometheus', 'guestwifi-alerts.yml');

// A Redis database of its own: every engine process's outbox sink reads every tenant's outbox in its Redis, and the
// store-lag histogram below counts what this process's sink stored (another file's sink could take it all).
const test = serviceTest(async () => ({ REDIS_URL: `${inject('redisUrl')}/22`, ACTOR_THREADS: '1' }));

const scrape = async (base: string): Promise<string> => {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
};

/** The metric names a PromQL expression reads (a histogram's _bucket/_sum/_count named by the histogram). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b((?:guestwifi|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, ''));
}

/** Whether /metrics' text declares the metric (`# TYPE`): a labelled counter with no series yet is still declared. */
const declares = (text: string, name: string): boolean => new RegExp(`^# TYPE ${name} (counter|gauge|histogram|summary)$`, 'm').test(text);

describe('observability', () => {
  test('the alert rules pass promtool check rules', () => {
    const r = spawnSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8' });
    expect(r.error, 'promtool (Debian package prometheus) must be installed; the global setup installs it as root').toBeUndefined();
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  test('the Grafana dashboard is a dashboard model, and every metric its queries and the alerts name is on /metrics', async ({ svc }) => {
    const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      title: string; uid: string; schemaVersion: number;
      panels: { id: number; type: string; title: string; gridPos: { h: number; w: number; x: number; y: number }; targets: { refId: string; expr: string }[] }[];
    };
    expect(dash.title).toBeTruthy();
    expect(dash.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dash.schemaVersion).toBeGreaterThanOrEqual(30);
    expect(dash.panels.length).toBeGreaterThan(5);
    expect(new Set(dash.panels.map((p) => p.id)).size).toBe(dash.panels.length);
    const names = new Set<string>();
    for (const p of dash.panels) {
      expect(p.title, 'a tile says what it measures').toBeTruthy();
      expect(p.gridPos.w * p.gridPos.h).toBeGreaterThan(0);
      expect(p.targets.length).toBeGreaterThan(0);
      for (const t of p.targets) {
        expect(t.refId).toMatch(/^[A-Z]$/);
        const read = metricNames(t.expr);
        expect(read.length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        for (const n of read) names.add(n);
      }
    }
    // The rules' expressions (their descriptions may name other metrics to look at).
    for (const m of readFileSync(ALERTS, 'utf8').matchAll(/expr: (?:\|\n)?([^\n]+)/g)) for (const n of metricNames(m[1]!)) names.add(n);
    // The spec's two alerts and the four the issue adds are there.
    for (const want of ['guestwifi_http_request_duration_seconds', 'guestwifi_stream_reconnects_total', 'guestwifi_outbox_sink_lag_seconds',
      'guestwifi_outbox_dead_letters_total', 'guestwifi_incidents_raised_total', 'guestwifi_otp_provider_errors_total']) expect(names).toContain(want);
    // A running service has served requests, a dashboard stream among them (the stream gauges come with the first).
    const t = await newTenant(svc.service, 'Observed Venue', ['dashboard']);
    const stream = new AbortController();
    const res = await fetch(`${svc.base}/api/v1/tenants/me/stream/audit`, { headers: { 'x-api-key': t.apiKey }, signal: stream.signal });
    expect(res.status).toBe(200);
    stream.abort();
    const text = await scrape(svc.base);
    const missing = [...names].filter((n) => !declares(text, n));
    expect(missing, 'metrics the dashboard or the alerts read and /metrics does not have').toEqual([]);
  });

  test('HTTP, RADIUS and Redis script latencies are histograms, worker threads\' metrics are summed in, the process metrics are there', async ({ svc, tenant: t, voucher }) => {
    // An unknown code (404) and a good one (200): two status classes of one route pattern.
    const mac = `02:${randomBytes(5).toString('hex').match(/../g)!.join(':')}`;
    expect((await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'NO-SUCH-CODE', mac } })).status).toBe(404);
    expect((await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: voucher.code, mac } })).status).toBe(200);

    // A NAS of this tenant asks once on each port.
    let nas: TestNas | undefined;
    try {
      const added = await addLoopbackNas(svc.base, t);
      const secret = added.secret;
      nas = added.radius;
      // Sent again until answered, as a NAS retransmits: the new NAS client reaches the registry a moment after its 201.
      // An answer is this request's by its code and identifier (a late answer to a retransmitted Access-Request is not).
      const answered = (pkt: Buffer, port: number, codes: number[]) => async (): Promise<boolean> => {
        await nas!.send(pkt, port);
        const got = await nas!.next(250);
        return got !== null && checkFraming(got.msg) > 0 && codes.includes(got.msg[0]!) && got.msg[1] === pkt[1];
      };
      const calling = mac.replace(/:/g, '-');
      await until(answered(accessRequest({ secret, userName: voucher.code, password: voucher.code, callingStationId: calling, id: 11 }), svc.service.radiusPorts.auth, [Code.ACCESS_ACCEPT, Code.ACCESS_REJECT]),
        { what: 'the Access-Request answered' });
      await until(answered(accountingRequest({ secret, userName: voucher.code, callingStationId: calling, id: 12 }), svc.service.radiusPorts.acct, [Code.ACCOUNTING_RESPONSE]),
        { what: 'the Accounting-Request answered' });
    } finally {
      await nas?.close();
    }

    const route = '/api/v1/hotspot-portal/voucher/verify';
    let text = '';
    // The sink thread stores the session's records and posts its snapshot a moment later.
    await until(async () => /^guestwifi_outbox_sink_store_lag_seconds_count [1-9]/m.test(text = await scrape(svc.base)),
      { timeoutMs: 20_000, what: 'the sink thread\'s store-lag histogram on /metrics' });
    for (const cls of ['2xx', '4xx']) {
      expect(text).toMatch(new RegExp(`^guestwifi_http_request_duration_seconds_bucket\\{le="0\\.005",route="${route}",method="POST",status_class="${cls}"\\} \\d+$`, 'm'));
      expect(text).toMatch(new RegExp(`^guestwifi_http_request_duration_seconds_bucket\\{le="\\+Inf",route="${route}",method="POST",status_class="${cls}"\\} [1-9]\\d*$`, 'm'));
    }
    // Never the raw path: no query string, no id in a label.
    expect(text).not.toContain(t.hotspotId);
    expect(text).not.toContain(t.tenantId);
    expect(text).toMatch(/^guestwifi_radius_request_duration_seconds_bucket\{le="\+Inf",port="auth",result="(accept|reject)"\} [1-9]/m);
    expect(text).toMatch(/^guestwifi_radius_request_duration_seconds_bucket\{le="\+Inf",port="acct",result="(response|error)"\} [1-9]/m);
    expect(text).toMatch(/^guestwifi_redis_script_duration_seconds_bucket\{le="\+Inf",script="\w+V\d+"\} [1-9]/m);
    expect(text).toMatch(/^guestwifi_signin_decisions_total\{method="voucher",outcome="accept",reason=""\} [1-9]/m);
    expect(text).toMatch(/^process_cpu_seconds_total [\d.e+-]+$/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes [\d.e+-]+$/m);
    // Every series but the default process metrics is named guestwifi_.
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) expect(line).toMatch(/^(guestwifi_|process_|nodejs_)/);
  });

  test('every answer carries a request id of its own; a client cannot choose it', async ({ svc }) => {
    const ids = new Set<string>();
    for (const path of ['/healthz', '/v1/no-such-route', '/v1/vouchers']) {
      const res = await fetch(`${svc.base}${path}`, { headers: { 'x-request-id': 'chosen-by-the-client' } });
      const id = res.headers.get('x-request-id') ?? '';
      expect(id, path).toMatch(UUID);
      ids.add(id);
    }
    expect(ids.size).toBe(3);
  });
});
