import type { DeviceType } from '../../reports/device-type.js';
import type { HotspotRef } from '../../hotspots/hotspot-service.js';
import type { Started } from '../identity-method.js';

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
 * A presented code on its way to the sign-in: who (`username`, the normalised
 * phone or e-mail), where, and the keyed hash of the code.
 */
export interface CodeClaim {
  tenantId: string;
  hotspotId: string;
  mac: string;
  ip: string;
  /** The request's source address (a fact; SignInRequest.source). */
  source: string;
  ssid: string;
  kind: 'phone' | 'email';
  username: string;
  /** The device type the guest's browser claimed (SignInRequest.device). */
  device?: DeviceType;
  /** OtpHasher's keyed hash of the code as presented. */
  codeHash: string;
  /** The hotspot, as the verify resolved it (SignInRequest.hotspot): not looked up again. */
  hotspot?: HotspotRef;
}

/**
 * How the OTP service signs a guest in with a presented code:
 * SignInService.code, the sign-in pipeline with OtpCodeMethod, where the code
 * check and the session start are one atomic step. Answers the voucher verify
 * success body, uses_left null (identity-method.ts, Started); a code refused (otp_invalid with
 * attempts_left, otp_expired, otp_locked) or a blocked device is thrown as
 * its AppError.
 */
export interface SessionStarter {
  code(claim: CodeClaim): Promise<Started>;
}

/**
 * The OTP flows record their refusals (a wrong code, a limit) in the sign-in
 * pipeline's decision sink, the same one every method's decisions go to.
 */
export type { DecisionSink as OtpDecisionSink, SignInDecision as OtpDecision } from '../decision-sink.js';
