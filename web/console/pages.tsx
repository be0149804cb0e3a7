import type { NavItem } from '../shared/index.js';
import type { ConsoleKey } from './messages.js';
import { BlocksPage } from './pages/blocks.js';
import { CompliancePage } from './pages/compliance.js';
import { GuestsPage } from './pages/guests.js';
import { HotspotsPage } from './pages/hotspots.js';
import { LivePage } from './pages/live.js';
import { ReportsPage } from './pages/reports.js';
import { SignInSettingsPage } from './pages/sign-in-settings.js';
import { SponsorRequestsPage } from './pages/sponsor-requests.js';
import { VouchersPage } from './pages/vouchers.js';
import { WebhooksPage } from './pages/webhooks.js';

/** The console's pages in navigation order: hash route, the catalogue key of its name, the page. */
const PAGES: [path: string, label: ConsoleKey, page: () => preact.JSX.Element][] = [
  ['/vouchers', 'nav_vouchers', VouchersPage], ['/live', 'nav_live', LivePage], ['/blocks', 'nav_blocks', BlocksPage],
  ['/hotspots', 'nav_hotspots', HotspotsPage], ['/guests', 'nav_guests', GuestsPage], ['/sign-in', 'nav_signin', SignInSettingsPage],
  ['/compliance', 'nav_compliance', CompliancePage], ['/sponsors', 'nav_sponsors', SponsorRequestsPage],
  ['/webhooks', 'nav_webhooks', WebhooksPage],
  ['/reports', 'nav_reports', ReportsPage],
];

export function consoleNav(t: (k: ConsoleKey) => string): NavItem[] {
  return PAGES.map(([path, key]) => ({ path, label: t(key) }));
}

/** The page of a hash route (the first one for an unknown route). */
export function Page(props: { route: string }): preact.JSX.Element {
  const Found = (PAGES.find(([p]) => p === props.route) ?? PAGES[0]!)[2];
  return <Found key={props.route} />;
}
