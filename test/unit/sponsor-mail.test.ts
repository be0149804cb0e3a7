import { describe, expect, it } from 'vitest';
import { shownMac, sponsorMail } from '../../engine/signin/sponsor/sponsor-mail.js';
import { newLinkToken, parseLinkToken, tenantOfRequest } from '../../engine/signin/sponsor/sponsor-store.js';
import { durationText } from '../../http/routes/portal-sponsor.js';
import en from '../../web/portal/messages.en.json' with { type: 'json' };
import tr from '../../web/portal/messages.tr.json' with { type: 'json' };

describe('sponsor e-mail, links and lengths', () => {
  it('the e-mail carries both links in Turkish and English, and a guest name cannot add lines to it', () => {
    const m = sponsorMail({
      guest: 'Ayşe\r\nBcc: victim@example.com', venue: 'Plaza', device: 'AA:**:**:**:**:FF',
      approveUrl: 'https://wifi.example/portal/sponsor/t?action=approve', rejectUrl: 'https://wifi.example/portal/sponsor/t?action=reject', ttlMinutes: 30,
    });
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.subject).toBe('Wi-Fi onayı / Wi-Fi approval: Ayşe Bcc: victim@example.com');
    expect(m.text.split('\n').filter((l) => l.startsWith('Bcc:'))).toEqual([]);
    for (const s of ['Onaylamak ve süreyi seçmek için: https://wifi.example/portal/sponsor/t?action=approve', 'To reject: https://wifi.example/portal/sponsor/t?action=reject',
      '30 dakika', '30 minutes', 'AA:**:**:**:**:FF']) expect(m.text).toContain(s);
  });

  it('a MAC is masked to its first and last byte unless the tenant shows it in full', () => {
    expect(shownMac('AA:BB:CC:DD:EE:FF', 'masked')).toBe('AA:**:**:**:**:FF');
    expect(shownMac('AA:BB:CC:DD:EE:FF', 'full')).toBe('AA:BB:CC:DD:EE:FF');
  });

  it('a link token is 256 random bits with its tenant; only its hash is kept; ids name their tenant', () => {
    const a = newLinkToken('tn_abc');
    const b = newLinkToken('tn_abc');
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}\.tn_abc$/);
    expect(a.token).not.toBe(b.token);
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.hash).not.toContain(a.token.slice(0, 43));
    expect(parseLinkToken(a.token)).toEqual({ tenantId: 'tn_abc', hash: a.hash });
    expect(parseLinkToken(a.token.replace('.tn_abc', '.tn_other'))?.hash).not.toBe(a.hash);
    expect(parseLinkToken('x.tn_abc')).toBeNull();
    expect(tenantOfRequest('spr_0123456789abcdef.tn_abc')).toBe('tn_abc');
    expect(tenantOfRequest('spr_0123456789abcdef')).toBeNull();
  });

  it('access lengths read as minutes, hours or days in both languages', () => {
    expect([30, 60, 240, 1440, 2880].map((n) => durationText(en, n))).toEqual(['30 minutes', '1 hour', '4 hours', '1 day', '2 days']);
    expect([30, 60, 240, 1440, 2880].map((n) => durationText(tr, n))).toEqual(['30 dakika', '1 saat', '4 saat', '1 gün', '2 gün']);
  });
});
