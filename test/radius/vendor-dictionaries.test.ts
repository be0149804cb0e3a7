import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { RadiusDictionary } from '../../radius/index.js';

/**
 * Issue 24 item 5: the vendors of the gateways venues own (Cisco and its
 * Airespace controllers, Aruba, Ruckus, Ubiquiti) beside WISPr, ChilliSpot
 * and MikroTik, with FreeRADIUS's numbers; and NAS_DICTIONARY_DIR, an
 * operator's own dictionaries read after ours.
 */

/** ATTRIBUTE lines of a FreeRADIUS-format file inside its vendor block: name → "number type". */
function attributesOf(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const t = raw.split('#')[0]!.trim().split(/\s+/);
    if (t[0] === 'ATTRIBUTE' && t.length >= 4) out.set(t[1]!, `${Number(t[2])} ${t[3]}`);
  }
  return out;
}

describe('vendor dictionaries of the gateways venues own', () => {
  const dict = RadiusDictionary.load();

  it('defines Cisco, Airespace, Aruba, Ruckus and Ubiquiti with their enterprise numbers and the attributes the replies use', () => {
    expect([dict.vendorId('Cisco'), dict.vendorId('Airespace'), dict.vendorId('Aruba'), dict.vendorId('Ruckus'), dict.vendorId('UBNT')])
      .toEqual([9, 14179, 14823, 25053, 41112]);
    const expected: [string, number, number, string][] = [
      ['Cisco-AVPair', 9, 1, 'string'],
      ['Airespace-Data-Bandwidth-Average-Contract', 14179, 7, 'integer'],
      ['Airespace-Data-Bandwidth-Average-Contract-Upstream', 14179, 13, 'integer'],
      ['Airespace-ACL-Name', 14179, 6, 'string'],
      ['Aruba-User-Role', 14823, 1, 'string'],
      ['Aruba-User-Vlan', 14823, 2, 'integer'],
      ['Ruckus-User-Groups', 25053, 1, 'string'],
      ['Ruckus-VLAN-ID', 25053, 9, 'integer'],
      ['UBNT-Data-Rate-DL', 41112, 1, 'integer64'],
      ['UBNT-Data-Rate-UL', 41112, 3, 'integer64'],
    ];
    for (const [name, vendorId, code, type] of expected) {
      expect(dict.attribute(name), name).toEqual({ name, vendorId, code, type });
      expect(dict.attributeByCode(vendorId, code)?.name).toBe(name);
    }
  });

  // freeradius-utils (radclient, installed by the global setup) brings freeradius-common's dictionaries.
  it.skipIf(!existsSync('/usr/share/freeradius/dictionary.aruba'))('agrees with every number and type of the FreeRADIUS dictionaries they were taken from', () => {
    for (const vendor of ['cisco', 'airespace', 'aruba', 'ruckus']) {
      const ours = attributesOf(readFileSync(projectPath('radius', 'dictionaries', `dictionary.${vendor}`), 'utf8'));
      const theirs = attributesOf(readFileSync(`/usr/share/freeradius/dictionary.${vendor}`, 'utf8'));
      expect(ours.size, vendor).toBeGreaterThan(0);
      for (const [name, numberAndType] of ours) expect(`${vendor} ${name} ${numberAndType}`).toBe(`${vendor} ${name} ${theirs.get(name) ?? 'missing'}`);
    }
  });
});

describe('NAS_DICTIONARY_DIR: an operator adds dictionaries without editing ours', () => {
  const root = mkdtempSync(join(tmpdir(), 'nas-dict-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dirWith = (name: string, files: Record<string, string>): string => {
    const dir = join(root, name);
    mkdirSync(dir);
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
    return dir;
  };

  it('reads every file of the directory after ours, in name order, with their $INCLUDEs', () => {
    const dir = dirWith('good', {
      'dictionary.acme': 'VENDOR Acme 99999\nBEGIN-VENDOR Acme\nATTRIBUTE Acme-Guest-Tier 1 string\n$INCLUDE acme.values\nEND-VENDOR Acme\n',
      'acme.values': 'VALUE Acme-Guest-Tier Gold 1\n',
      'dictionary.zeta': 'VENDOR Zeta 99998\nBEGIN-VENDOR Zeta\nATTRIBUTE Zeta-Plan 2 integer\nEND-VENDOR Zeta\n',
      '.hidden': 'this is not a dictionary\n',
    });
    const dict = RadiusDictionary.load(undefined, dir);
    expect(dict.attribute('Acme-Guest-Tier')).toEqual({ name: 'Acme-Guest-Tier', vendorId: 99999, code: 1, type: 'string' });
    expect(dict.attribute('Zeta-Plan').vendorId).toBe(99998);
    expect(dict.value('Acme-Guest-Tier', 'Gold')).toBe(1);
    // Ours are all still there.
    expect(dict.attribute('Aruba-User-Role').code).toBe(1);
    expect(() => RadiusDictionary.load()).not.toThrow();
    expect(() => RadiusDictionary.load().attribute('Acme-Guest-Tier')).toThrow(/No attribute named Acme-Guest-Tier/);
  });

  it('refuses a file that renumbers one of our attributes or vendors, or is malformed, naming file and line', () => {
    const renumber = dirWith('renumber', { 'dictionary.aruba-too': 'VENDOR Aruba 14823\nBEGIN-VENDOR Aruba\nATTRIBUTE Aruba-User-Role 7 string\nEND-VENDOR Aruba\n' });
    expect(() => RadiusDictionary.load(undefined, renumber)).toThrow(/dictionary\.aruba-too:3: Aruba-User-Role redefined/);
    const vendor = dirWith('vendor', { 'my-vendors': '# ours\nVENDOR Cisco 10\n' });
    expect(() => RadiusDictionary.load(undefined, vendor)).toThrow(/my-vendors:2: vendor Cisco redefined as 10 \(was 9\)/);
    const broken = dirWith('broken', { 'dictionary.bad': 'VENDOR Acme 99999\nBEGIN-VENDOR Acme\nATTRIBUTE Acme-X 1 blob\n' });
    expect(() => RadiusDictionary.load(undefined, broken)).toThrow(/dictionary\.bad:3: unknown type blob/);
    expect(() => RadiusDictionary.load(undefined, join(root, 'absent'))).toThrow(/cannot read the directory/);
  });
});
