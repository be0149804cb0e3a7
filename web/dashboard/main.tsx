import '../shared/styles.css';
import { mountApp, Shell, useT } from '../shared/index.js';
import { dashboardMessages, type DashboardKey } from './messages.js';

/** The dashboard's placeholder page: signed in, it names itself. The dashboard helper replaces this entry. */
function Overview(): preact.JSX.Element {
  const t = useT<DashboardKey>();
  return <h1>{t('dashboard_heading')}</h1>;
}

mountApp(
  <Shell catalogue={dashboardMessages} titleKey="app_dashboard"
    nav={(t) => [{ path: '/overview', label: t('nav_overview') }]}
    page={() => <Overview />} />,
);
