/**
 * Surname matching for room sign-in. A PMS holds names as the front desk
 * typed them ("KÖHLER, A", "Işık", "ISIK", "Koehler"); a guest types theirs
 * on a phone keyboard, often without the letters of their language. Both
 * sides are reduced to a few keys and match when any key is shared:
 *
 * - the part before a comma only ("KÖHLER, A" -> "KÖHLER"; Opera's
 *   "SURNAME, INITIAL" form), then spaces collapsed, and hyphens and
 *   apostrophes (O'Brien, Smith-Jones) kept as typed;
 * - case folded twice: by Turkish rules (I -> ı, İ -> i) and by the root
 *   locale's (I -> i, İ -> i + dot), so "IŞIK" meets "ışık" and "ISIK" meets
 *   "isik";
 * - each with its diacritics, without them (NFD, marks dropped, ı -> i,
 *   ß -> ss, ø -> o, ł -> l, đ -> d, æ -> ae, œ -> oe), and with German
 *   umlauts written out (ä -> ae, ö -> oe, ü -> ue), so "Köhler" meets
 *   "KOHLER" and "KOEHLER".
 *
 * Nothing else is loosened: no prefix or substring match, no edit distance.
 * Each key a fold adds is one more spelling a guesser may hit; the guessing
 * limits (per device, per source address) bound how many they may try.
 */

const SPECIAL: Record<string, string> = { 'ı': 'i', 'ß': 'ss', 'ø': 'o', 'ł': 'l', 'đ': 'd', 'æ': 'ae', 'œ': 'oe', 'þ': 'th', 'ð': 'd' };
const UMLAUT: Record<string, string> = { 'ä': 'ae', 'ö': 'oe', 'ü': 'ue' };

const stripMarks = (s: string): string => s.normalize('NFD').replace(/\p{M}+/gu, '');
const ascii = (s: string): string => stripMarks(s).replace(/[ıßøłđæœþð]/g, (c) => SPECIAL[c]!);
const german = (s: string): string => ascii(s.normalize('NFC').replace(/[äöü]/g, (c) => UMLAUT[c]!));

/** The part of a name the match reads: before a comma, trimmed, inner spaces collapsed. */
export function surnamePart(name: string): string {
  const comma = name.indexOf(',');
  return (comma >= 0 ? name.slice(0, comma) : name).trim().replace(/\s+/g, ' ');
}

/** The keys a name matches under (see the file's comment); empty for a name with no letters. */
export function surnameKeys(name: string): Set<string> {
  const part = surnamePart(name).normalize('NFC');
  const out = new Set<string>();
  if (!/\p{L}/u.test(part)) return out;
  for (const lower of [part.toLocaleLowerCase('tr-TR'), part.toLowerCase()]) {
    out.add(lower.normalize('NFC'));
    out.add(ascii(lower));
    out.add(german(lower));
  }
  return out;
}

/** True when what the guest typed and what the PMS holds share a key. */
export function surnameMatches(typed: string, held: string): boolean {
  const a = surnameKeys(typed);
  if (a.size === 0) return false;
  for (const k of surnameKeys(held)) if (a.has(k)) return true;
  return false;
}
