import '../shared/styles.css';
import { mountApp, Shell } from '../shared/index.js';
import { consoleMessages } from './messages.js';
import { Page, consoleNav } from './pages.js';

mountApp(<Shell catalogue={consoleMessages} titleKey="app_console" nav={consoleNav} page={(route) => <Page route={route} />} />);
