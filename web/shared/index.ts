/** The shared front-end layer of the console and the dashboard: import from here. */
export * from './i18n.js';
export * from './api.js';
export * from './session.js';
export { sharedMessages, type SharedKey } from './messages.js';
export { Layout, LangSelect, type NavItem } from './layout.js';
export { SignIn } from './sign-in.js';
export { usePoll, type Poll } from './use-poll.js';
export { Shell, mountApp, useHashRoute, type ShellProps } from './app-shell.js';
export * from './public-api.js';
