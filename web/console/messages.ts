import type { Catalogue } from '../shared/i18n.js';

const en = {
  nav_vouchers: 'Vouchers',
  nav_live: 'Live sessions',
  nav_blocks: 'Blocked devices',
  nav_hotspots: 'Hotspots',
  nav_guests: 'Guests',
  nav_signin: 'Sign-in settings',
  nav_compliance: 'Compliance',
};

const tr: typeof en = {
  nav_vouchers: 'Kuponlar',
  nav_live: 'Canlı oturumlar',
  nav_blocks: 'Engelli cihazlar',
  nav_hotspots: 'Erişim noktaları',
  nav_guests: 'Misafirler',
  nav_signin: 'Giriş ayarları',
  nav_compliance: 'Uyumluluk',
};

export type ConsoleKey = keyof typeof en;
export const consoleMessages: Catalogue<typeof en> = { en, tr };
