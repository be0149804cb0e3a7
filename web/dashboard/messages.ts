import type { Catalogue } from '../shared/i18n.js';

const en = {
  nav_overview: 'Overview',
  dashboard_heading: 'Dashboard',
};

const tr: typeof en = {
  nav_overview: 'Genel bakış',
  dashboard_heading: 'Pano',
};

export type DashboardKey = keyof typeof en;
export const dashboardMessages: Catalogue<typeof en> = { en, tr };
