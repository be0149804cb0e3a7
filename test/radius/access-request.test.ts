import { describe, expect, it } from 'vitest';
import { macOf, ssidOf } from '../../radius/access-request.js';

describe('Called-Station-Id and Calling-Station-Id', () => {
  it('finds the SSID after an AP MAC in dash, colon or bare form', () => {
    expect(ssidOf('00-10-A4-23-19-C0:AP1')).toBe('AP1');
    expect(ssidOf('00:10:a4:23:19:c0:Hotel Guest')).toBe('Hotel Guest');
    expect(ssidOf('0010A42319C0:Lobby:5GHz')).toBe('Lobby:5GHz');
  });

  it('has no SSID when there is none, or the prefix is not a MAC', () => {
    for (const s of ['', '00-10-A4-23-19-C0', '00-10-A4-23-19-C0:', '0010A42319C0', 'Hotel:Guest', '00-10-A4:23-19-C0:X', '00-10-G4-23-19-C0:X', '\u0010\u0011-A4-23-19-C0:X']) {
      expect(ssidOf(s), JSON.stringify(s)).toBeUndefined();
    }
  });

  it('takes the MAC from Calling-Station-Id first, then from User-Name', () => {
    expect(macOf('aa-bb-cc-dd-ee-ff', '11:22:33:44:55:66')).toBe('AA:BB:CC:DD:EE:FF');
    expect(macOf('', '112233445566')).toBe('11:22:33:44:55:66');
    expect(macOf('not a mac', 'nor this')).toBe('');
  });
});
