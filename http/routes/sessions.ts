import { Errors, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import {
  block, blockList, guestHistory, guestHistoryQuery, guestList, guestListResponse, session, sessionBlock, sessionDisconnected,
  sessionExtend, sessionExtended, sessionList, sessionPage,
} from './sessions.schemas.js';

const EXTEND_PRESETS: Record<string, number> = { '1h': 60, '4h': 240, '24h': 1440 };

/** Sessions, guests and the block list (see /v1/openapi.json); extend and block are the console's session actions as API calls. */
export function sessionRoutes(engine: Engine): Route[] {
  const ss = engine.sessions;
  const who = (p: { subject: string; via: string }): string => `${p.via}:${p.subject}`;
  return [
    route({
      method: 'get', path: '/v1/sessions', surface: 'public', auth: true, module: 'sessions', querySchema: sessionList,
      responseSchema: sessionPage, summary: 'List sessions, newest first; status active, ended or disconnected',
      handler: async ({ principal, q }) => ({ status: 200, body: await ss.list(principal.tenant.id, q.status, q.limit, q.offset, q.cursor) }),
    }),
    route({
      method: 'get', path: '/v1/sessions/:id', surface: 'public', auth: true, module: 'sessions', responseSchema: session,
      summary: 'Read a session (id as ses_... or the portal\'s sess_...)', errors: { 404: 'session_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await ss.get(principal.tenant.id, params[0]!) }),
    }),
    route({
      method: 'del', path: '/v1/sessions/:id', surface: 'public', auth: true, module: 'sessions', responseSchema: sessionDisconnected,
      summary: 'Disconnect a session now (Disconnect-Request to the NAS); reason admin_disconnect',
      errors: { 404: 'session_not_found', 409: 'session_not_active' },
      handler: async ({ principal, params }) => ({ status: 200, body: await ss.disconnect(principal.tenant.id, params[0]!, who(principal)) }),
    }),
    route({
      method: 'post', path: '/v1/sessions/:id/extend', surface: 'public', auth: true, module: 'sessions', bodySchema: sessionExtend,
      responseSchema: sessionExtended, summary: 'Extend a live session by minutes or a preset (1h, 4h, 24h); the NAS gets a CoA at once',
      errors: { 404: 'session_not_found', 409: 'session_not_active' },
      handler: async ({ principal, params, body }) => {
        const minutes: number | undefined = body.minutes ?? (body.preset ? EXTEND_PRESETS[body.preset] : undefined);
        if (!minutes) throw Errors.VALIDATION_FAILED('give minutes or preset', [{ field: 'minutes', message: 'minutes or preset is required' }]);
        return { status: 200, body: await ss.extend(principal.tenant.id, params[0]!, minutes, who(principal)) };
      },
    }),
    route({
      method: 'post', path: '/v1/sessions/:id/block', surface: 'public', auth: true, module: 'sessions', bodySchema: sessionBlock,
      responseSchema: block, summary: 'End the session and block its device for 24h, 7d or permanently',
      errors: { 404: 'session_not_found' },
      handler: async ({ principal, params, body }) => ({
        status: 200, body: await ss.block(principal.tenant.id, params[0]!, body.duration, who(principal)),
      }),
      audit: (_ctx, out) => ({ event: 'device_blocked', details: { duration: out.duration, until: out.until, session_id: out.session_id }, subject: { mac: out.mac } }),
    }),
    route({
      method: 'get', path: '/v1/blocks', surface: 'public', auth: true, module: 'sessions', responseSchema: blockList,
      summary: 'Blocked devices (expired timed blocks are not listed)',
      handler: async ({ principal }) => ({ status: 200, body: { data: await engine.blocks.list(principal.tenant.id) } }),
    }),
    route({
      method: 'del', path: '/v1/blocks/:mac', surface: 'public', auth: true, module: 'sessions',
      summary: 'Remove a block (the only way to lift a permanent one)', errors: { 404: 'block_not_found', 400: 'invalid_mac' },
      handler: async ({ principal, params }) => ({ status: 200, body: await engine.blocks.unblock(principal.tenant.id, params[0]!) }),
      audit: (_ctx, out) => ({ event: 'device_unblocked', details: {}, subject: { mac: out.mac } }),
    }),
    route({
      method: 'get', path: '/v1/guests', surface: 'public', auth: true, module: 'sessions', querySchema: guestList,
      responseSchema: guestListResponse, summary: 'Guests (devices) seen, newest first; ?mac= narrows to one device',
      handler: async ({ principal, q }) => ({ status: 200, body: { data: await ss.guests(principal.tenant.id, q.mac) } }),
    }),
    route({
      method: 'get', path: '/v1/guests/:mac/history', surface: 'public', auth: true, module: 'sessions', querySchema: guestHistoryQuery,
      responseSchema: guestHistory, summary: "A device's sessions of the last `days` days (default 30)",
      handler: async ({ principal, params, q }) => ({ status: 200, body: await ss.history(principal.tenant.id, params[0]!, q.days) }),
    }),
  ];
}
