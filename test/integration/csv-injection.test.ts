import { describe, expect } from 'vitest';
import { AccessLog, ACCESS_LOG_HEADER, accessLogLine } from '../../engine/compliance/access-log.js';
import { csvCell } from '../../engine/util/csv-cell.js';
import { poolTest } from '../support/fixture.js';

/**
 * Issue 18, Build 4: text that reaches a CSV export cannot run as a
 * spreadsheet formula (OWASP CSV injection): a leading `=`, `+`, `-`, `@`,
 * tab or CR gets a leading `'`.
 */
describe('CSV exports are neutralised against formula injection', () => {
  poolTest('csvCell: risky first characters get a quote, signed numbers and plain text stay as they are', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+cmd|/c calc!A1')).toBe("'+cmd|/c calc!A1");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1:A9)')).toBe("'@SUM(A1:A9)");
    expect(csvCell('\t=1')).toBe("'\t=1");
    expect(csvCell('\r=1')).toBe('"\'\r=1"');
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(csvCell('+905321234567')).toBe('+905321234567');
    expect(csvCell('-12.5')).toBe('-12.5');
    expect(csvCell('10.0.0.1')).toBe('10.0.0.1');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell(null)).toBe('');
  });

  poolTest('the 5651 access log: a session row holding formulas comes out as text', async ({ pool }) => {
    const tenant = `tn_csv${Math.random().toString(36).slice(2, 10)}`;
    const day = new Date().toISOString().slice(0, 10);
    const sid = `sess_${Math.random().toString(36).slice(2, 18)}`;
    // As an older build recorded it (the body's ip went unchecked), or a gateway could report it.
    await pool.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, ssid, started_at, ends_at, status)
       VALUES ($1, $2, 'hs_csv', 'AA:BB:CC:00:00:01', '=cmd|'' /C calc''!A0', '@SUM(1+1)*cmd|'' /C calc''!A0', 'email', 'Hall', $3, $4, 'active')`,
      [sid, tenant, `${day}T00:00:01Z`, `${day}T23:00:00Z`]);
    const lines: string[] = [];
    for await (const page of new AccessLog(pool, tenant).day(day)) for (const r of page) lines.push(accessLogLine(r, '-Lobby+1'));
    expect(ACCESS_LOG_HEADER.startsWith('session_id,')).toBe(true);
    expect(lines).toHaveLength(1);
    const cells = lines[0]!.trimEnd().split(',');
    expect(cells.slice(0, 7)).toEqual([sid, 'hs_csv', "'-Lobby+1", 'AA:BB:CC:00:00:01', "'=cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0", 'email']);
    for (const c of cells) expect(c, c).not.toMatch(/^[=+\-@\t\r]/);
  });
});
