import { describe, expect, it } from 'vitest';
import { RadiusDictionary, Vendor, VendorAttr } from '../../radius/index.js';
import { radiusPackage } from './helpers.js';

describe('vendor dictionaries (radius/dictionaries, FreeRADIUS format)', () => {
  const dict = RadiusDictionary.load();

  it('defines the vendors and the attributes the Access-Accept uses, with their published numbers', () => {
    expect(dict.vendorId(Vendor.WISPR)).toBe(14122);
    expect(dict.vendorId(Vendor.CHILLISPOT)).toBe(14559);
    expect(dict.vendorId(Vendor.MIKROTIK)).toBe(14988);
    const expected: [string, number, number, string][] = [
      [VendorAttr.WISPR_BANDWIDTH_MAX_UP, 14122, 7, 'integer'],
      [VendorAttr.WISPR_BANDWIDTH_MAX_DOWN, 14122, 8, 'integer'],
      [VendorAttr.CHILLISPOT_BANDWIDTH_MAX_UP, 14559, 4, 'integer'],
      [VendorAttr.CHILLISPOT_BANDWIDTH_MAX_DOWN, 14559, 5, 'integer'],
      [VendorAttr.CHILLISPOT_MAX_TOTAL_OCTETS, 14559, 3, 'integer'],
      [VendorAttr.CHILLISPOT_MAX_TOTAL_GIGAWORDS, 14559, 23, 'integer'],
      ['ChilliSpot-Max-Input-Octets', 14559, 1, 'integer'],
      ['ChilliSpot-Max-Output-Octets', 14559, 2, 'integer'],
      ['ChilliSpot-Max-Input-Gigawords', 14559, 21, 'integer'],
      ['ChilliSpot-Max-Output-Gigawords', 14559, 22, 'integer'],
      [VendorAttr.MIKROTIK_RATE_LIMIT, 14988, 8, 'string'],
      [VendorAttr.MIKROTIK_TOTAL_LIMIT, 14988, 17, 'integer'],
      [VendorAttr.MIKROTIK_TOTAL_LIMIT_GIGAWORDS, 14988, 18, 'integer'],
    ];
    for (const [name, vendorId, code, type] of expected) {
      expect(dict.attribute(name), name).toEqual({ name, vendorId, code, type });
      expect(dict.attributeByCode(vendorId, code)?.name).toBe(name);
    }
    expect(dict.value('Mikrotik-Wireless-Enc-Algo', 'AES-CCM')).toBe(3);
  });

  it('fails with file and line on a malformed dictionary, and on unknown names', () => {
    expect(() => RadiusDictionary.parse('VENDOR X 1\nBEGIN-VENDOR X\nATTRIBUTE X-A 300 integer\nEND-VENDOR X\n', 'd'))
      .toThrow(/d:3: bad attribute number 300/);
    expect(() => RadiusDictionary.parse('ATTRIBUTE A 1 blob\n', 'd')).toThrow(/d:1: unknown type blob/);
    expect(() => RadiusDictionary.parse('VENDOR X 1\nBEGIN-VENDOR X\n', 'd')).toThrow(/never closed/);
    expect(() => RadiusDictionary.parse('BEGIN-TLV Foo\n', 'd')).toThrow(/unsupported directive BEGIN-TLV/);
    expect(() => RadiusDictionary.parse('VENDOR X 1 format=2,1\n', 'd')).toThrow(/not supported/);
    expect(() => dict.attribute('No-Such-Attribute')).toThrow(expect.objectContaining({ code: 'radius_unknown_attribute' }));
    expect(() => RadiusDictionary.load('/nonexistent/dictionary')).toThrow(expect.objectContaining({ code: 'radius_dictionary' }));
  });

  it('resolves $INCLUDE and ignores comments', () => {
    const d = RadiusDictionary.parse('# top\n$INCLUDE v\n', 'main', (f) => (f === 'v' ? 'VENDOR V 42 # c\nBEGIN-VENDOR V\nATTRIBUTE V-A 1 string\nEND-VENDOR V\n' : ''));
    expect(d.attribute('V-A')).toEqual({ name: 'V-A', vendorId: 42, code: 1, type: 'string' });
  });

  it('is readable by another FreeRADIUS-format parser (the radius npm package)', () => {
    const pkg = radiusPackage<{ vendor_name_to_id(n: string): string; load_dictionaries(): void }>();
    pkg.load_dictionaries();
    expect(Number(pkg.vendor_name_to_id('ChilliSpot'))).toBe(14559);
  });
});
