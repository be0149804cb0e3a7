import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { assetPath } from '../engine/index.js';
import { RadiusErrors } from './errors.js';

/** One attribute as a dictionary defines it. `vendorId` 0: a standard attribute. */
export interface DictAttribute {
  readonly name: string;
  readonly vendorId: number;
  readonly code: number;
  readonly type: string;
}

const TYPES = new Set([
  'string', 'octets', 'integer', 'ipaddr', 'date', 'ipv6addr', 'ipv6prefix', 'ifid',
  'integer64', 'byte', 'short', 'signed', 'ether', 'abinary', 'combo-ip',
]);

/** The dictionary shipped with the project: radius/dictionaries/dictionary and its $INCLUDEs. */
export const DEFAULT_DICTIONARY = (): string => assetPath('radius', 'dictionaries', 'dictionary');

/**
 * Vendor dictionaries in FreeRADIUS format (VENDOR, BEGIN-VENDOR/END-VENDOR,
 * ATTRIBUTE, VALUE, $INCLUDE), read once at start-up with synchronous I/O.
 *
 * Only what a guest Wi-Fi NAS needs is supported: vendors with the RFC 2865
 * §5.26 layout (one-octet type, one-octet length) and flat attributes. Any
 * other directive or malformed line fails the load with file and line, so a
 * broken dictionary stops the service at start rather than mis-encoding
 * replies later. Lookups by name are for start-up code; the packet path works
 * with the numbers resolved from them.
 */
export class RadiusDictionary {
  private readonly byName = new Map<string, DictAttribute>();
  private readonly byCode = new Map<string, DictAttribute>();
  private readonly vendors = new Map<string, number>();
  private readonly values = new Map<string, Map<string, number>>();

  private constructor() {}

  /**
   * Reads `file` (default: the project's radius/dictionaries/dictionary) and
   * everything it includes, then every file of `extraDir` (NAS_DICTIONARY_DIR:
   * an operator's own vendors) in name order, skipping names that start with
   * a dot. A file there may add vendors and attributes, and $INCLUDE files
   * beside it, but not renumber ours: a name or vendor defined twice with two
   * numbers fails the load, naming the file and line.
   */
  static load(file: string = DEFAULT_DICTIONARY(), extraDir?: string): RadiusDictionary {
    const dict = new RadiusDictionary();
    const seen = new Set<string>();
    dict.readFile(file, seen);
    if (extraDir !== undefined) {
      let names: string[];
      try {
        names = readdirSync(extraDir).filter((n) => !n.startsWith('.')).sort();
      } catch (err) {
        throw RadiusErrors.RADIUS_DICTIONARY(extraDir, `cannot read the directory: ${(err as Error).message}`);
      }
      for (const n of names) {
        const path = join(extraDir, n);
        if (statSync(path).isFile()) dict.readFile(path, seen);
      }
    }
    return dict;
  }

  /** Parses dictionary text; `$INCLUDE` is resolved through `include` (name → text). */
  static parse(text: string, name = 'dictionary', include?: (file: string) => string): RadiusDictionary {
    const dict = new RadiusDictionary();
    dict.parseText(text, name, new Set([name]), (f) => {
      if (!include) throw RadiusErrors.RADIUS_DICTIONARY(name, `$INCLUDE ${f} with no include resolver`);
      return { text: include(f), path: f };
    });
    return dict;
  }

  /** The attribute called `name`; throws when the dictionaries do not define it. */
  attribute(name: string): DictAttribute {
    const a = this.byName.get(name);
    if (!a) throw RadiusErrors.RADIUS_UNKNOWN_ATTRIBUTE(name);
    return a;
  }

  /** The attribute with this vendor and number, if defined. */
  attributeByCode(vendorId: number, code: number): DictAttribute | undefined {
    return this.byCode.get(`${vendorId}:${code}`);
  }

  /** A vendor's Private Enterprise Number. */
  vendorId(name: string): number {
    const id = this.vendors.get(name);
    if (id === undefined) throw RadiusErrors.RADIUS_UNKNOWN_ATTRIBUTE(`vendor ${name}`);
    return id;
  }

  /** A named VALUE of an attribute. */
  value(attribute: string, name: string): number {
    const v = this.values.get(attribute)?.get(name);
    if (v === undefined) throw RadiusErrors.RADIUS_UNKNOWN_ATTRIBUTE(`${attribute} value ${name}`);
    return v;
  }

  /** Every attribute, in definition order. */
  attributes(): DictAttribute[] {
    return [...this.byName.values()];
  }

  private readFile(path: string, seen: Set<string>): void {
    if (seen.has(path)) return;
    seen.add(path);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw RadiusErrors.RADIUS_DICTIONARY(path, `cannot read: ${(err as Error).message}`);
    }
    this.parseText(text, path, seen, (f) => {
      const p = join(dirname(path), f);
      return { text: null, path: p };
    });
  }

  private parseText(
    text: string, file: string, seen: Set<string>,
    resolve: (f: string) => { text: string | null; path: string },
  ): void {
    let vendor = 0;
    let vendorName = '';
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const where = `${basename(file)}:${i + 1}`;
      const hash = lines[i]!.indexOf('#');
      const line = (hash >= 0 ? lines[i]!.slice(0, hash) : lines[i]!).trim();
      if (!line) continue;
      const t = line.split(/\s+/);
      const kw = t[0]!;
      switch (kw) {
        case '$INCLUDE':
        case '$INCLUDE-': {
          if (t.length !== 2) throw RadiusErrors.RADIUS_DICTIONARY(where, 'expected "$INCLUDE <file>"');
          const r = resolve(t[1]!);
          if (r.text === null) {
            // `$INCLUDE-`: include when present (FreeRADIUS semantics).
            if (kw === '$INCLUDE-' && !existsSync(r.path)) continue;
            this.readFile(r.path, seen);
          } else if (!seen.has(r.path)) {
            seen.add(r.path);
            this.parseText(r.text, r.path, seen, resolve);
          }
          break;
        }
        case 'VENDOR': {
          if (t.length < 3 || t.length > 4) throw RadiusErrors.RADIUS_DICTIONARY(where, 'expected "VENDOR <name> <number> [format=1,1]"');
          const id = parseNumber(t[2]!);
          if (id === null || id <= 0 || id > 0xffffff) throw RadiusErrors.RADIUS_DICTIONARY(where, `bad vendor number ${t[2]}`);
          if (t[3] !== undefined && t[3] !== 'format=1,1') throw RadiusErrors.RADIUS_DICTIONARY(where, `vendor format ${t[3]} is not supported`);
          const old = this.vendors.get(t[1]!);
          if (old !== undefined && old !== id) throw RadiusErrors.RADIUS_DICTIONARY(where, `vendor ${t[1]} redefined as ${id} (was ${old})`);
          this.vendors.set(t[1]!, id);
          break;
        }
        case 'BEGIN-VENDOR': {
          if (t.length !== 2) throw RadiusErrors.RADIUS_DICTIONARY(where, 'expected "BEGIN-VENDOR <name>"');
          if (vendor) throw RadiusErrors.RADIUS_DICTIONARY(where, `BEGIN-VENDOR inside the block of ${vendorName}`);
          const id = this.vendors.get(t[1]!);
          if (id === undefined) throw RadiusErrors.RADIUS_DICTIONARY(where, `BEGIN-VENDOR of unknown vendor ${t[1]}`);
          vendor = id;
          vendorName = t[1]!;
          break;
        }
        case 'END-VENDOR': {
          if (t[1] !== vendorName || !vendor) throw RadiusErrors.RADIUS_DICTIONARY(where, `END-VENDOR ${t[1] ?? ''} does not close ${vendorName || 'any block'}`);
          vendor = 0;
          vendorName = '';
          break;
        }
        case 'ATTRIBUTE': {
          if (t.length < 4 || t.length > 5) throw RadiusErrors.RADIUS_DICTIONARY(where, 'expected "ATTRIBUTE <name> <number> <type> [flags]"');
          const code = parseNumber(t[2]!);
          if (code === null || code < 1 || code > 255) throw RadiusErrors.RADIUS_DICTIONARY(where, `bad attribute number ${t[2]}`);
          if (!TYPES.has(t[3]!)) throw RadiusErrors.RADIUS_DICTIONARY(where, `unknown type ${t[3]}`);
          const attr: DictAttribute = Object.freeze({ name: t[1]!, vendorId: vendor, code, type: t[3]! });
          const old = this.byName.get(attr.name);
          if (old && (old.vendorId !== attr.vendorId || old.code !== attr.code)) {
            throw RadiusErrors.RADIUS_DICTIONARY(where, `${attr.name} redefined`);
          }
          this.byName.set(attr.name, attr);
          this.byCode.set(`${vendor}:${code}`, attr);
          break;
        }
        case 'VALUE': {
          if (t.length !== 4) throw RadiusErrors.RADIUS_DICTIONARY(where, 'expected "VALUE <attribute> <name> <number>"');
          const n = parseNumber(t[3]!);
          if (n === null) throw RadiusErrors.RADIUS_DICTIONARY(where, `bad value ${t[3]}`);
          let m = this.values.get(t[1]!);
          if (!m) this.values.set(t[1]!, (m = new Map()));
          m.set(t[2]!, n);
          break;
        }
        default:
          throw RadiusErrors.RADIUS_DICTIONARY(where, `unsupported directive ${kw}`);
      }
    }
    if (vendor) throw RadiusErrors.RADIUS_DICTIONARY(basename(file), `BEGIN-VENDOR ${vendorName} is never closed`);
  }
}

function parseNumber(s: string): number | null {
  if (/^0x[0-9a-f]+$/i.test(s)) return parseInt(s.slice(2), 16);
  if (/^\d+$/.test(s)) return parseInt(s, 10);
  return null;
}
