import {
  Engine, createLogger, loadConfig, type OtpChannelName, type OtpDecision, type OtpMessage, type OtpSender, type SendResult, type SessionStarter,
  type VerifiedIdentity,
} from '../../engine/index.js';
import { keys } from '../../engine/redis/keys.js';
import { inject } from 'vitest';
import { testEnv } from '../support/fixture.js';

/** A sender per channel that records every message; `refuse` makes it answer as a provider that said no. */
export class RecordingSender implements OtpSender {
  readonly provider = 'fake';
  readonly sent: OtpMessage[] = [];
  refuse = false;
  constructor(readonly channel: OtpChannelName) {}
  async send(msg: OtpMessage): Promise<SendResult> {
    if (this.refuse) return { ok: false, provider: 'fake', kind: 'credentials_rejected', code: '30', retryable: false, detail: 'invalid credentials' };
    this.sent.push(msg);
    return { ok: true, providerRef: `job-${this.sent.length}` };
  }
  /** The last code sent to `to`. */
  last(to: string): string {
    const m = [...this.sent].reverse().find((x) => x.to === to);
    if (!m) throw new Error(`no ${this.channel} message to ${to}`);
    return m.code;
  }
}

export interface OtpTestEngine {
  engine: Engine;
  senders: Record<OtpChannelName, RecordingSender>;
  started: VerifiedIdentity[];
  decisions: OtpDecision[];
}

/**
 * An engine (no actor threads, no sink) with recording senders and the given
 * clock; started. Sessions start for real (a code's check and its session
 * start are one script): `started` records each guest a code signed in, as
 * its session's grant in Redis says, and `decisions` every sign-in decision
 * the engine recorded (the OTP service's refusals and the pipeline's
 * outcomes), in order. It keeps its Redis state in a database of its own
 * (`redisDb`): messaging-app fallback watches are claimed by any engine on
 * the same Redis, as they must be in production, and an engine whose clock is
 * hours ahead would fire other files' watches. `env`: more settings (TRUSTED_PROXIES).
 */
export async function otpEngine(now: () => number, pollMs = 50, redisDb = 3, env: Record<string, string> = {}): Promise<OtpTestEngine> {
  const senders = { sms: new RecordingSender('sms'), msgapp: new RecordingSender('msgapp'), email: new RecordingSender('email') };
  const started: VerifiedIdentity[] = [];
  const decisions: OtpDecision[] = [];
  const sessions: SessionStarter = {
    code: async (c) => {
      const answer = await engine.signIn.code(c);
      const method = await engine.redis.hget(keys.grant(c.tenantId, c.hotspotId, c.mac), 'method');
      started.push({ tenantId: c.tenantId, hotspotId: c.hotspotId, mac: c.mac, ip: c.ip, ssid: c.ssid, method: method as VerifiedIdentity['method'], username: c.username });
      return answer;
    },
  };
  const engine: Engine = new Engine(loadConfig(testEnv({ ...env, REDIS_URL: `${inject('redisUrl')}/${redisDb}` })), createLogger('silent'), {
    now, actors: false, sink: false, otp: { senders: { forTenant: async (_t, ch) => senders[ch] }, sessions, pollMs },
  });
  // Every decision, whoever records it: the dashboard's recorder gets them all and still writes them.
  const recorder = engine.decisions;
  const record = recorder.record.bind(recorder);
  recorder.record = (d) => { decisions.push(d); record(d); };
  await engine.start();
  return { engine, senders, started, decisions };
}
