import { describe, expect, it } from 'vitest';
import { VoucherSheetService } from '../../engine/vouchers/voucher-sheet-service.js';
import { termsInWords } from '../../engine/vouchers/voucher-sheet-text.js';
import type { HotspotService } from '../../engine/hotspots/hotspot-service.js';
import type { Pool } from '../../engine/store/postgres.js';
import { createLogger } from '../../engine/logger.js';
import { prefilledCode } from '../../http/routes/portal-page.js';

const none = { max_uses: null, duration_minutes: null, daily_quota_mb: null, session_quota_mb: null, bandwidth_down_mbps: null, expires_at: null, valid_from: null, valid_until: null };

describe('voucher terms in words', () => {
  it('says uses, time, window, expiry and data in Turkish and English, in the hotspot zone', () => {
    const v = { ...none, max_uses: 1, duration_minutes: 1440, daily_quota_mb: 2048, valid_from: new Date('2026-12-05T15:00:00Z'), valid_until: new Date('2026-12-05T21:00:00Z') };
    expect(termsInWords(v, 'en', 'Europe/Istanbul')).toEqual([
      'Single use', 'Online time per sign-in: 1 day', 'Valid only from 5 Dec 2026, 18:00 GMT+3 to 6 Dec 2026, 00:00 GMT+3', 'Data: 2 GB per day',
    ]);
    const tr = termsInWords({ ...v, max_uses: null, duration_minutes: 90 }, 'tr', 'Europe/Istanbul');
    expect(tr[0]).toBe('Sınırsız kullanım');
    expect(tr[1]).toBe('Her girişte çevrimiçi süre: 90 dakika');
    expect(tr[2]).toMatch(/^Yalnızca 5 Ara 2026 18:00 GMT\+3 ile 6 Ara 2026 00:00 GMT\+3 arasında geçerli$/);
    expect(termsInWords({ ...none, valid_until: new Date('2026-12-05T21:00:00Z') }, 'en', 'UTC')[1]).toBe('Valid until 5 Dec 2026, 21:00 UTC');
  });
});

describe('voucher sheets without PORTAL_PUBLIC_URL', () => {
  it('answer voucher_sheets_unavailable before reading anything', async () => {
    const touched: string[] = [];
    const trap = new Proxy({}, { get: (_t, k) => { touched.push(String(k)); throw new Error('must not be used'); } });
    const svc = new VoucherSheetService({ pool: trap as Pool, hotspots: trap as HotspotService, publicUrl: undefined, log: createLogger('silent') });
    try {
      await expect(svc.render('ten_x', { batchId: 'vbt_x', layout: 'a4' })).rejects.toMatchObject({ code: 'voucher_sheets_unavailable', status: 503 });
      expect(touched).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});

describe('the portal field filled from a QR URL', () => {
  it('reads ?code=, or the code of a gateway-passed URL naming this hotspot; drops control characters and overlong values', () => {
    expect(prefilledCode(new URLSearchParams('hotspot_id=hs_a&code=AB12CD'), null, 'hs_a')).toBe('AB12CD');
    expect(prefilledCode(new URLSearchParams({ code: 'A\u0000B\nC' }), null, 'hs_a')).toBe('ABC');
    expect(prefilledCode(new URLSearchParams({ code: 'x'.repeat(129) }), null, 'hs_a')).toBe('');
    const passed = 'http://wifi.example/portal?hotspot_id=hs_a&code=FROM-QR';
    expect(prefilledCode(new URLSearchParams({ userurl: passed }), null, 'hs_a')).toBe('FROM-QR');
    expect(prefilledCode(new URLSearchParams({ userurl: passed }), null, 'hs_b')).toBe('');
  });
});
