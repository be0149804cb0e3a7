import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { labelValues, METRIC_PREFIX, Metrics } from '../../engine/metrics.js';

/** engine/metrics.ts on prom-client (issue 24 item 3): names, labels, histograms, worker threads' snapshots. */
describe('Metrics', () => {
  it('names every metric guestwifi_, one label per dimension', async () => {
    const m = new Metrics();
    m.counter('signin_decisions_total', 'decisions', 'method,outcome,reason');
    m.inc('signin_decisions_total', labelValues('voucher', 'accept', ''));
    m.inc('signin_decisions_total', labelValues('voucher', 'reject', 'voucher_expired'), 2);
    m.gauge('stream_clients', 'clients', () => 3);
    const text = await m.render();
    expect(text).toMatch(/^guestwifi_signin_decisions_total\{method="voucher",outcome="accept",reason=""\} 1$/m);
    expect(text).toMatch(/^guestwifi_signin_decisions_total\{method="voucher",outcome="reject",reason="voucher_expired"\} 2$/m);
    expect(text).toMatch(/^guestwifi_stream_clients 3$/m);
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) expect(line).toMatch(/^guestwifi_/);
    expect(m.value('signin_decisions_total', labelValues('voucher', 'reject', 'voucher_expired'))).toBe(2);
  });

  it('counts on between scrapes (a scrape adds only what changed)', async () => {
    const m = new Metrics();
    m.counter('x_total', 'x', 'kind');
    m.inc('x_total', 'a');
    expect(await m.render()).toMatch(/^guestwifi_x_total\{kind="a"\} 1$/m);
    m.inc('x_total', 'a', 4);
    expect(await m.render()).toMatch(/^guestwifi_x_total\{kind="a"\} 5$/m);
    expect(await m.render()).toMatch(/^guestwifi_x_total\{kind="a"\} 5$/m);
  });

  it('keeps latency histograms with _bucket{le=...}, _sum and _count', async () => {
    const m = new Metrics();
    m.histogram('radius_request_duration_seconds', 'latency', 'port,result');
    m.observe('radius_request_duration_seconds', labelValues('auth', 'accept'), 0.003);
    m.observe('radius_request_duration_seconds', labelValues('auth', 'accept'), 0.3);
    const text = await m.render();
    expect(text).toMatch(/^guestwifi_radius_request_duration_seconds_bucket\{le="0.005",port="auth",result="accept"\} 1$/m);
    expect(text).toMatch(/^guestwifi_radius_request_duration_seconds_bucket\{le="\+Inf",port="auth",result="accept"\} 2$/m);
    expect(text).toMatch(/^guestwifi_radius_request_duration_seconds_count\{port="auth",result="accept"\} 2$/m);
  });

  it('writes a histogram exactly as prom-client\'s own Histogram would (the counting is ours, the exposition theirs)', async () => {
    const m = new Metrics();
    const reference = new Registry();
    const theirs = new Histogram({ name: `${METRIC_PREFIX}lat_seconds`, help: 'lat', labelNames: ['port', 'result'], buckets: [0.001, 0.01, 0.1], registers: [reference] });
    m.histogram('lat_seconds', 'lat', 'port,result', [0.001, 0.01, 0.1]);
    // On a bound, between bounds, past every bound, and a second label value.
    const seen: [string, string, number][] = [['auth', 'accept', 0.001], ['auth', 'accept', 0.005], ['auth', 'accept', 3], ['acct', 'ok', 0]];
    for (const [port, result, v] of seen) {
      m.observe('lat_seconds', labelValues(port, result), v);
      theirs.observe({ port, result }, v);
    }
    m.observe('lat_seconds', labelValues('auth', 'accept'), NaN); // ignored, as before
    expect(await m.render()).toBe(await reference.metrics());
    // A worker thread's snapshot sums into the main thread's as prom-client's did.
    const main = new Metrics();
    main.histogram('lat_seconds', 'lat', 'port,result', [0.001, 0.01, 0.1]);
    main.observe('lat_seconds', labelValues('acct', 'ok'), 0.05);
    main.absorb('thread', await m.snapshot());
    const text = await main.render();
    expect(text).toMatch(/^guestwifi_lat_seconds_bucket\{le="0.1",port="acct",result="ok"\} 2$/m);
    expect(text).toMatch(/^guestwifi_lat_seconds_bucket\{le="0.01",port="auth",result="accept"\} 2$/m);
    expect(text).toMatch(/^guestwifi_lat_seconds_count\{port="auth",result="accept"\} 3$/m);
    expect(text).toMatch(/^guestwifi_lat_seconds_sum\{port="acct",result="ok"\} 0.05$/m);
  });

  it('has the default process metrics when asked', async () => {
    const text = await new Metrics({ processMetrics: true }).render();
    expect(text).toMatch(/^process_cpu_seconds_total \S+$/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \S+$/m);
    expect(await new Metrics().render()).not.toContain('process_cpu_seconds_total');
  });

  it('sums a worker thread\'s snapshots into its own, and a restarted thread\'s counts go on from its predecessor\'s', async () => {
    const main = new Metrics();
    main.counter('rows_total', 'rows');
    main.inc('rows_total', '', 1);
    const thread = (): Metrics => {
      const w = new Metrics();
      w.counter('rows_total', 'rows');
      w.histogram('lag_seconds', 'lag');
      w.gauge('held', 'held', () => 7);
      return w;
    };
    const first = thread();
    first.inc('rows_total', '', 10);
    first.observe('lag_seconds', '', 0.002);
    main.absorb('sink', await first.snapshot());
    let text = await main.render();
    expect(text).toMatch(/^guestwifi_rows_total 11$/m);
    expect(text).toMatch(/^guestwifi_lag_seconds_count 1$/m);
    expect(text).toMatch(/^guestwifi_held 7$/m);
    // The thread dies and a new one starts from zero.
    main.retire('sink');
    const second = thread();
    second.inc('rows_total', '', 5);
    second.observe('lag_seconds', '', 0.002);
    main.absorb('sink', await second.snapshot());
    text = await main.render();
    expect(text).toMatch(/^guestwifi_rows_total 16$/m);
    expect(text).toMatch(/^guestwifi_lag_seconds_bucket\{le="0.0025"\} 2$/m);
    // A gauge is the live thread's, not summed with the dead one's.
    expect(text).toMatch(/^guestwifi_held 7$/m);
  });
});
