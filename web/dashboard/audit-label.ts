// From the files themselves rather than ../shared/index.js: test/unit/audit-labels.test.ts imports this
// module in Node, without the page's components.
import type { Translate } from '../shared/i18n.js';
import { sharedMessages, type SharedKey } from '../shared/messages.js';

/** An audit event type's label key: `audit_type_<event_type>` in the shared catalogue (web/shared/messages.ts). */
export type AuditTypeKey = Extract<SharedKey, `audit_type_${string}`>;

/**
 * The catalogue key labelling an audit event type, or null for a type this
 * page has no words for yet (one the engine added after this page was
 * built): the caller shows the code itself then, never a blank or the key.
 * Both languages have the same keys (Catalogue's type), so asking English
 * answers for Turkish too.
 */
export function auditTypeKey(eventType: string): AuditTypeKey | null {
  const key = `audit_type_${eventType}`;
  return Object.hasOwn(sharedMessages.en, key) ? (key as AuditTypeKey) : null;
}

/** The event type in words in the current language, or null when it has none (see auditTypeKey). */
export function auditTypeLabel(t: Translate, eventType: string): string | null {
  const key = auditTypeKey(eventType);
  return key ? t(key) : null;
}
