import { describe, expect, it } from 'vitest';
import { AcctStatusType, TERMINATE_CAUSES } from '../../radius/index.js';
import { readAccountingRequest } from '../../radius/accounting-request.js';
import { accountingRequest, nasRecord } from '../radius/helpers.js';

const nas = nasRecord();

/** The engine's end reason radius/ hands over for a Stop carrying this Acct-Terminate-Cause (absent: undefined). */
function reasonFor(cause: number | undefined): unknown {
  const buf = accountingRequest({ secret: nas.secret, status: AcctStatusType.STOP, callingStationId: 'AA-BB-CC-00-00-02', terminateCause: cause });
  const msg = readAccountingRequest(buf, buf.length, nas);
  if (typeof msg === 'string') throw new Error(`dropped: ${msg}`);
  return msg.endReason;
}

describe('Acct-Terminate-Cause to the engine end reason (radius/ translates, the engine never sees RADIUS names)', () => {
  it('maps the causes the engine records on their own (RFC 2866 §5.10)', () => {
    expect(TERMINATE_CAUSES[6]).toBe('admin-reset');
    expect(reasonFor(1)).toBe('user_request');
    expect(reasonFor(2)).toBe('lost_carrier');
    expect(reasonFor(4)).toBe('idle_timeout');
    expect(reasonFor(5)).toBe('session_timeout');
    expect(reasonFor(6)).toBe('admin_disconnect');
    expect(reasonFor(7)).toBe('nas_reboot');
    expect(reasonFor(11)).toBe('nas_reboot');
  });

  it('leaves the reason out for any other cause, an unknown number, or none: the engine takes it as the guest stopping', () => {
    expect(reasonFor(3)).toBeUndefined(); // lost-service
    expect(reasonFor(10)).toBeUndefined(); // nas-request
    expect(reasonFor(99)).toBeUndefined();
    expect(reasonFor(undefined)).toBeUndefined();
  });
});
