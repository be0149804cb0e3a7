import { useT, type NavItem } from '../shared/index.js';
import type { ConsoleKey } from './messages.js';

/** The console's pages in navigation order: the hash route and the catalogue key of its name. */
const PAGES: [path: string, label: ConsoleKey][] = [
  ['/vouchers', 'nav_vouchers'], ['/live', 'nav_live'], ['/blocks', 'nav_blocks'], ['/hotspots', 'nav_hotspots'],
  ['/guests', 'nav_guests'], ['/sign-in', 'nav_signin'], ['/compliance', 'nav_compliance'],
];

export function consoleNav(t: (k: ConsoleKey) => string): NavItem[] {
  return PAGES.map(([path, key]) => ({ path, label: t(key) }));
}

/** The page of a hash route. */
export function Page(props: { route: string }): preact.JSX.Element {
  const t = useT<ConsoleKey>();
  const entry = PAGES.find(([p]) => p === props.route) ?? PAGES[0]!;
  return <h1>{t(entry[1])}</h1>;
}
