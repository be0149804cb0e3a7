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
 * How the OTP service starts the session once the code was consumed:
 * SignInService.start, the sign-in pipeline with the identity method (tests
 * plug in a recorder). Answers the voucher verify success body minus uses_left.
 */
export interface SessionStarter {
  start(id: VerifiedIdentity): Promise<{ status: 'authorized'; session_id: string; expires_at: string; redirect_url: string | null }>;
}

/**
 * The OTP flows record their refusals (a wrong code, a limit) in the sign-in
 * pipeline's decision sink, the same one every method's decisions go to.
 */
export type { DecisionSink as OtpDecisionSink, SignInDecision as OtpDecision } from '../decision-sink.js';
