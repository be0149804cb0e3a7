import type { Catalogue } from '../shared/i18n.js';
import { en } from './messages.en.js';
import { tr } from './messages.tr.js';

/** The console's own words (the shared ones, sign-in and error sentences, are in web/shared/messages.ts). */
export type ConsoleKey = keyof typeof en;
export const consoleMessages: Catalogue<typeof en> = { en, tr };
