import { describe, expect, it } from 'vitest';
import { decide, ssidListed, type DecisionSession } from '../../engine/sessions/decide.js';

const NOW = 1_700_000_000_000;
const session = (ssids: string): DecisionSession => ({
  sid: 'sess_x', untilMs: NOW + 60_000, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, bytesIn: 0, bytesOut: 0, daily: 0, ssids,
});
const MAC = 'AA:BB:CC:00:00:01';

/** Issue 18, Build 5: the SSID the NAS names is checked against the session's list. */
describe('decide() and the SSID the NAS names', () => {
  it('refuses an SSID outside the list, accepts one inside it', () => {
    expect(decide({ mac: MAC, ssid: 'Guest' }, session('VIP\nStaff'), NOW)).toEqual({ accept: false, reason: 'Not allowed on this network' });
    expect(decide({ mac: MAC, ssid: 'Staff' }, session('VIP\nStaff'), NOW).accept).toBe(true);
    expect(decide({ mac: MAC, ssid: 'VIP' }, session('VIP\nStaff'), NOW).accept).toBe(true);
  });

  it('a session without a list, or a NAS that names no SSID, is not refused for it', () => {
    expect(decide({ mac: MAC, ssid: 'Guest' }, session(''), NOW).accept).toBe(true);
    expect(decide({ mac: MAC }, session('VIP'), NOW).accept).toBe(true);
    expect(decide({ mac: MAC, ssid: '' }, session('VIP'), NOW).accept).toBe(true);
  });

  it('matches whole names only, as use-voucher-18.lua does', () => {
    expect(ssidListed('VIP\nStaff', 'VI')).toBe(false);
    expect(ssidListed('VIP\nStaff', 'IP')).toBe(false);
    expect(ssidListed('VIP\nStaff', 'VIP\nStaff')).toBe(false);
    expect(ssidListed('XVIP\nVIP', 'VIP')).toBe(true);
    expect(ssidListed('Staff', 'Staff')).toBe(true);
  });
});
