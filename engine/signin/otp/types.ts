import { Errors } from '../../errors.js';

/** The guest the OTP verify route proved, handed to the session start. */
export interface VerifiedIdentity {
  tenantId: string;
  hotspotId: string;
  mac: string;
  ip: string;
  ssid: string;
  method: 'sms_otp' | 'msgapp_otp' | 'email';
  /** E.164 phone or e-mail. */
  username: string;
}

/**
 * The port the OTP verify route uses to start the session once the code was
 * consumed; the lead implements it with the sign-in pipeline. Returns the
 * voucher verify success body shape minus uses_left.
 */
export interface SessionStarter {
  start(id: VerifiedIdentity): Promise<{ status: 'authorized'; session_id: string; expires_at: string; redirect_url: string | null }>;
}

/** One sign-in decision of the OTP flows, for the dashboard's auth.success / auth.failure counts. */
export interface OtpDecision {
  tenantId: string;
  hotspotId: string;
  method: VerifiedIdentity['method'];
  outcome: 'accept' | 'reject';
  /** The error code of a refusal (`otp_invalid`, `otp_rate_limited`, ...); '' for an accept. */
  reason: string;
  at: number;
}

/** Where decisions go; the sign-in pipeline's decision sink plugs in here. */
export type OtpDecisionSink = (d: OtpDecision) => void;

/** Until the pipeline is wired: OTP codes can be requested and checked, but no session starts. */
export const NO_SESSION_STARTER: SessionStarter = {
  start: () => Promise.reject(Errors.SERVICE_UNAVAILABLE('OTP sign-in')),
};
