import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { RECORD } from '../../engine/redis/records.js';
import { auditEntriesOf, type OutboxRecord } from '../../engine/store/outbox-writer.js';
import { auditTypeKey, auditTypeLabel } from '../../web/dashboard/audit-label.js';
import { translator } from '../../web/shared/i18n.js';
import { sharedMessages } from '../../web/shared/messages.js';

/**
 * The members of a string-literal union type alias, read by the TypeScript
 * compiler from the engine's source: the engine keeps its operator event
 * types as a type (OperatorEvent), so this is its list, not a copy of it.
 */
function literalUnion(file: string, alias: string): string[] {
  // noResolve: the union is written out in the file itself; its imports are not needed to read it.
  const program = ts.createProgram([file], { noResolve: true, noLib: true, types: [], noEmit: true });
  const src = program.getSourceFile(file);
  if (!src) throw new Error(`${file} not read`);
  const decl = src.statements.find((s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === alias);
  if (!decl) throw new Error(`no type ${alias} in ${file}`);
  const type = program.getTypeChecker().getTypeAtLocation(decl.name);
  return (type.isUnion() ? type.types : [type]).map((m) => {
    if (!m.isStringLiteral()) throw new Error(`${alias} has a member that is not a string literal`);
    return m.value;
  });
}

/**
 * Every event_type the engine writes into the audit log: what the sink makes
 * of each outbox record type (engine/store/outbox-writer.ts, auditEntriesOf),
 * with an operator record's type taken from the OperatorEvent union
 * (engine/audit/audit-log.ts) that AuditLog.operator accepts.
 */
function engineAuditTypes(): string[] {
  const operator = literalUnion(fileURLToPath(new URL('../../engine/audit/audit-log.ts', import.meta.url)), 'OperatorEvent');
  const base = { sid: 'sess_1', hs: 'hs_1', mac: '02:00:00:00:00:01', at: '1764000000000', until: '1764003600000', minutes: '30' };
  const records = Object.values(RECORD).flatMap((type): OutboxRecord[] =>
    type === RECORD.audit ? operator.map((event) => ({ tenant: 'tn_1', f: { ...base, type, rid: `op_${event}`, event } })) : [{ tenant: 'tn_1', f: { ...base, type } }]);
  return [...new Set(auditEntriesOf(records).map((e) => e.event_type))].sort();
}

describe('audit event type labels (web/shared/messages.ts)', () => {
  const types = engineAuditTypes();

  it('reads the engine\'s types: session transitions and operator actions', () => {
    // Guards the reading itself: an empty or partial list would let the next test pass for nothing.
    for (const known of ['session_start', 'session_end', 'session_extend', 'voucher_created', 'sign_in_settings_changed']) expect(types).toContain(known);
    expect(types).not.toContain('voucher_use'); // stored as a session_start
  });

  it('has a label in English and in Turkish for every type the engine writes', () => {
    const missing = types.filter((type) => auditTypeKey(type) === null);
    expect(missing, 'add audit_type_<type> to both languages of web/shared/messages.ts').toEqual([]);
    for (const type of types) {
      const key = auditTypeKey(type)!;
      const en = sharedMessages.en[key];
      const tr = sharedMessages.tr[key];
      expect(en.trim(), type).not.toBe('');
      expect(en, type).not.toBe(type);
      // A Turkish label left as the English words would slip past a key check.
      expect(tr, type).not.toBe(en);
      expect(auditTypeLabel(translator(sharedMessages.tr), type)).toBe(tr);
    }
  });

  it('has no words for a type it does not know, so the page shows the code rather than a blank or a key', () => {
    expect(auditTypeKey('voucher_exported_to_mars')).toBeNull();
    expect(auditTypeLabel(translator(sharedMessages.en), 'voucher_exported_to_mars')).toBeNull();
    // Names every object has are no labels either.
    expect(auditTypeKey('constructor')).toBeNull();
    expect(auditTypeKey('__proto__')).toBeNull();
  });
});
