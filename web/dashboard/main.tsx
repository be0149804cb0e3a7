import '../shared/styles.css';
import './dashboard.css';
import { mountApp, Shell } from '../shared/index.js';
import { Dashboard } from './dashboard.js';
import { dashboardMessages } from './messages.js';

mountApp(
  <Shell catalogue={dashboardMessages} titleKey="app_dashboard"
    nav={(t) => [{ path: '/overview', label: t('nav_overview') }]}
    page={(_route, session) => <Dashboard session={session} />} />,
);
