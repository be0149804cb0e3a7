import { describe, expect, it } from 'vitest';
import { normalizeMac } from '../../engine/index.js';

describe('normalizeMac', () => {
  it('accepts the usual spellings and gives AA:BB:CC:DD:EE:FF', () => {
    for (const m of ['aa:bb:cc:dd:ee:ff', 'AA-BB-CC-DD-EE-FF', 'aabb.ccdd.eeff', 'AABBCCDDEEFF', 'aA:Bb:cC:dD:eE:fF']) {
      expect(normalizeMac(m)).toBe('AA:BB:CC:DD:EE:FF');
    }
    expect(normalizeMac('02-00-0a-1b-2c-3d')).toBe('02:00:0A:1B:2C:3D');
  });
  it('refuses what is not a MAC', () => {
    for (const m of ['', 'AA:BB:CC:DD:EE', 'AA:BB:CC:DD:EE:FF:00', 'GG:BB:CC:DD:EE:FF', 'AA BB CC DD EE FF', 'aabbccddeef', 'aabbccddeeff0', 'AA:BB:CC:DD:EE:F\u0000']) {
      expect(normalizeMac(m)).toBeNull();
    }
  });
});
