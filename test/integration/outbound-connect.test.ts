import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../engine/metrics.js';
import { OutboundPolicy, type Resolver } from '../../engine/net/outbound-target.js';
import { EmailSender } from '../../engine/signin/providers/email-sender.js';
import type { MsgappProvider } from '../../engine/signin/providers/msgapp-provider.js';
import { msgappSender } from '../../engine/signin/providers/msgapp-senders.js';
import { NetgsmSmsSender } from '../../engine/signin/providers/netgsm-sms.js';
import { FAILURE_KINDS, PROVIDER_ERRORS_METRIC, ProviderFailures } from '../../engine/signin/providers/provider-failures.js';
import { ProviderHttp } from '../../engine/signin/providers/provider-http.js';
import type { OtpMessage } from '../../engine/signin/providers/types.js';
import { FakeCarrier, SMS_PATH } from '../support/fake-carrier.js';
import { capturingLogger } from '../support/log-capture.js';
import { SmtpListener } from '../support/smtp-listener.js';

/**
 * Outbound targets at connection time: the name a tenant's URL holds is
 * resolved and checked for every new connection and the socket goes to the
 * address checked (a name that answers public at save and loopback at send,
 * DNS rebinding, reaches nothing); redirects are not followed; metadata is
 * refused even with ALLOW_PRIVATE_TARGETS; and what reaches the metric and
 * the incident window is a kind from a fixed set, whatever the provider says.
 */
const ENV = `OUTBOUND_TEST_${process.pid}`;
const msg = (over: Partial<OtpMessage> = {}): OtpMessage => ({ tenantId: 'ten_out', requestId: 'req_1', to: '+905321234567', code: '482913', locale: 'en', ...over });

/** A resolver from a table of answers per name, each name's answers used in turn (the last one sticks); counts its calls. */
function scripted(table: Record<string, string[][]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    const seq = table[host];
    if (!seq) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    const n = calls.filter((h) => h === host).length;
    const answer = seq[Math.min(n, seq.length) - 1]!;
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const }));
  };
  return Object.assign(fn, { calls });
}

function rig(policy: OutboundPolicy) {
  const metrics = new Metrics();
  const captured = capturingLogger();
  const observed: string[] = [];
  const failures = new ProviderFailures(captured.log, metrics, (_t, _p, code) => observed.push(code));
  return { metrics, captured, observed, failures, http: new ProviderHttp(policy) };
}

describe('outbound targets at connection time', () => {
  let carrier: FakeCarrier;
  let port: string;
  let smtp: SmtpListener;
  let tcp: TcpServer;
  let tcpPort: number;
  let tcpConnections = 0;

  beforeAll(async () => {
    process.env[ENV] = 'usr1:pw-1';
    carrier = await FakeCarrier.start();
    port = new URL(carrier.url).port;
    smtp = await SmtpListener.start();
    // A listener that only counts connections: a refused target must never open one.
    tcp = createTcpServer((s) => { tcpConnections++; s.destroy(); });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    tcpPort = (tcp.address() as AddressInfo).port;
  });
  afterAll(async () => {
    delete process.env[ENV];
    delete process.env[`${ENV}_SMTP`];
    await carrier.close();
    await smtp.close();
    await new Promise((resolve) => tcp.close(resolve));
  });

  it('DNS rebinding: a name that answered public when saved and loopback at send is refused at connect; the carrier hears nothing', async () => {
    carrier.reset();
    const resolve = scripted({ 'carrier.rebind.test': [['93.184.216.34'], ['127.0.0.1']] });
    const policy = new OutboundPolicy({ allowPrivate: false, resolve });
    const url = `http://carrier.rebind.test:${port}`;
    await expect(policy.checkUrl('sms.base_url', url, ['http:', 'https:'])).resolves.toBeUndefined();
    const r = rig(policy);
    const result = await new NetgsmSmsSender({ provider: 'netgsm', base_url: url, credentials_ref: `env://${ENV}` }, r.failures, r.http).send(msg());
    expect(result).toMatchObject({ ok: false, kind: 'target_not_allowed', retryable: false });
    expect(resolve.calls).toEqual(['carrier.rebind.test', 'carrier.rebind.test']);
    expect(carrier.requests).toHaveLength(0);
    expect(r.metrics.value(PROVIDER_ERRORS_METRIC, 'netgsm_sms\u001ftarget_not_allowed')).toBe(1);
  });

  it('pinned: the socket goes to the address the policy checked, with the URL\'s name as Host; every new connection is checked again', async () => {
    carrier.reset();
    const resolve = scripted({ 'carrier.pinned.test': [['127.0.0.1']] });
    const r = rig(new OutboundPolicy({ allowPrivate: true, resolve }));
    const sender = new NetgsmSmsSender({ provider: 'netgsm', base_url: `http://carrier.pinned.test:${port}`, credentials_ref: `env://${ENV}` }, r.failures, r.http);
    expect(await sender.send(msg())).toMatchObject({ ok: true });
    expect(carrier.to(SMS_PATH)[0]!.headers.host).toBe(`carrier.pinned.test:${port}`);
    r.http.closeIdle();
    expect(await sender.send(msg())).toMatchObject({ ok: true });
    expect(resolve.calls).toHaveLength(2);
  });

  it('a literal loopback address stored before the rule is refused at send, without a connection', async () => {
    const r = rig(new OutboundPolicy({ allowPrivate: false }));
    const result = await msgappSender(typeA(`http://127.0.0.1:${tcpPort}`), r.failures, r.http).send(msg());
    expect(result).toMatchObject({ ok: false, kind: 'target_not_allowed' });
    const decimal = await msgappSender(typeA(`http://2130706433:${tcpPort}`), r.failures, r.http).send(msg());
    expect(decimal).toMatchObject({ ok: false, kind: 'target_not_allowed' });
    expect(tcpConnections).toBe(0);
  });

  it('metadata is refused at connect even with ALLOW_PRIVATE_TARGETS, by address or by a name resolving to it', async () => {
    const resolve = scripted({ 'meta.rebind.test': [['169.254.169.254']], 'meta6.rebind.test': [['fd00:ec2::254']] });
    const r = rig(new OutboundPolicy({ allowPrivate: true, resolve }));
    for (const base of ['http://169.254.169.254', 'http://meta.rebind.test', 'http://meta6.rebind.test', 'http://[::ffff:169.254.169.254]', 'http://metadata.google.internal']) {
      const result = await msgappSender(typeA(base), r.failures, r.http).send(msg());
      expect(result, base).toMatchObject({ ok: false, kind: 'target_not_allowed' });
    }
  });

  it('a redirect is never followed: the 3xx is the answer, and the place it points to hears nothing', async () => {
    let elsewhere = 0;
    const target: HttpServer = createHttpServer((_req, res) => { elsewhere++; res.end('{"code":"00"}'); });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const to = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    const redirecting: HttpServer = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => { res.writeHead(307, { location: `${to}${req.url}` }); res.end(); });
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const r = rig(new OutboundPolicy({ allowPrivate: true }));
      const from = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
      const sms = await new NetgsmSmsSender({ provider: 'netgsm', base_url: from, credentials_ref: `env://${ENV}` }, r.failures, r.http).send(msg());
      expect(sms).toMatchObject({ ok: false, kind: 'redirect' });
      const a = await msgappSender(typeA(from), r.failures, r.http).send(msg());
      expect(a).toMatchObject({ ok: false, kind: 'redirect' });
      expect(elsewhere).toBe(0);
    } finally {
      await new Promise((resolve) => redirecting.close(resolve));
      await new Promise((resolve) => target.close(resolve));
    }
  });

  it("SMTP: a tenant's server is resolved, checked and pinned; the operator's SMTP_URL may be private, never metadata", async () => {
    const ref = `${ENV}_SMTP`;
    const from = 'no-reply@localhost';
    // Strict: the tenant's loopback server is refused before any connection.
    const strict = rig(new OutboundPolicy({ allowPrivate: false }));
    process.env[ref] = `smtp://u:p@127.0.0.1:${tcpPort}`;
    expect(await new EmailSender({ urlRef: `env://${ref}`, serviceUrl: undefined, from }, strict.failures, new OutboundPolicy({ allowPrivate: false })).send(msg({ to: 'a@example.org' })))
      .toMatchObject({ ok: false, kind: 'target_not_allowed' });
    // Rebinding: public when saved, loopback at send.
    const resolve = scripted({ 'mail.rebind.test': [['93.184.216.34'], ['127.0.0.1']] });
    const rebinding = new OutboundPolicy({ allowPrivate: false, resolve });
    process.env[ref] = `smtp://mail.rebind.test:${tcpPort}`;
    await rebinding.checkUrl('email.smtp_url_ref', process.env[ref]!, ['smtp:', 'smtps:']);
    expect(await new EmailSender({ urlRef: `env://${ref}`, serviceUrl: undefined, from }, strict.failures, rebinding).send(msg({ to: 'b@example.org' })))
      .toMatchObject({ ok: false, kind: 'target_not_allowed' });
    expect(tcpConnections).toBe(0);
    // Pinned: a name resolved by the policy reaches the listener at the address it checked.
    const pinned = new OutboundPolicy({ allowPrivate: true, resolve: scripted({ 'mail.pinned.test': [['127.0.0.1']] }) });
    process.env[ref] = `smtp://mail.pinned.test:${smtp.port}`;
    expect(await new EmailSender({ urlRef: `env://${ref}`, serviceUrl: undefined, from }, strict.failures, pinned).send(msg({ to: 'c@example.org' }))).toMatchObject({ ok: true });
    await smtp.waitFor('c@example.org');
    // The operator's own SMTP_URL on loopback works under the strict policy; metadata does not.
    expect(await new EmailSender({ urlRef: null, serviceUrl: smtp.url, from }, strict.failures, new OutboundPolicy({ allowPrivate: false })).send(msg({ to: 'd@example.org' })))
      .toMatchObject({ ok: true });
    expect(await new EmailSender({ urlRef: null, serviceUrl: 'smtp://169.254.169.254:25', from }, strict.failures, new OutboundPolicy({ allowPrivate: false })).send(msg({ to: 'e@example.org' })))
      .toMatchObject({ ok: false, kind: 'target_not_allowed' });
  });

  it('metric labels and incident codes come from the fixed set, whatever codes and statuses the provider answers', async () => {
    carrier.reset();
    const r = rig(new OutboundPolicy({ allowPrivate: true }));
    const sms = new NetgsmSmsSender({ provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${ENV}` }, r.failures, r.http);
    const a = msgappSender(typeA(carrier.url), r.failures, r.http);
    const answers = [
      { status: 200, body: { code: 'zz-\u0007"injected"\nlabel' } }, { status: 200, body: { code: 'x'.repeat(5000) } },
      { status: 418, body: { code: '13' } }, { status: 200, body: { code: 99999 } }, { status: 502, body: 'Bad Gateway <html>' },
    ];
    for (const ans of answers) {
      carrier.answerNext(SMS_PATH, ans);
      expect((await sms.send(msg())).ok).toBe(false);
    }
    for (const [status, code] of [[400, 'Q-1'], [401, 'E2'], [429, 'slow-down'], [503, 'maint-7'], [302, 'moved'], [500, 'not-json']] as const) {
      carrier.answerNext('/v1/messages/template', code === 'not-json' ? { status, body: '<html>oops</html>' } : { status, body: { error: { code } } });
      expect((await a.send(msg())).ok).toBe(false);
    }
    const labels = [...(await r.metrics.render()).matchAll(/guestwifi_otp_provider_errors_total\{provider="[^"]*",code="([^"]*)"\}/g)].map((m) => m[1]!);
    expect(labels.length).toBeGreaterThan(3);
    for (const l of labels) expect(FAILURE_KINDS).toContain(l);
    expect(r.observed).toHaveLength(answers.length + 6);
    for (const k of r.observed) expect(FAILURE_KINDS).toContain(k);
    // The provider's code stays in the log, cut to 32 safe characters.
    const codes = r.captured.lines.map((l) => JSON.parse(l).code as string);
    for (const c of codes) expect(c).toMatch(/^[A-Za-z0-9_.:?-]{1,32}$/);
  });
});

function typeA(base: string): MsgappProvider {
  return {
    tenant_id: 'ten_out', type: 'A', provider: 'acme', enabled: true, base_url: base, api_key_ref: `env://${ENV}`,
    business_device_id: 'dev-1', template_id: 'tpl-1', access_token_ref: null, phone_number_id: null, template_name: null,
    callback_secret_ref: null, api_key_set: false, access_token_set: false, callback_secret_set: false, updated_at: new Date().toISOString(),
  };
}
