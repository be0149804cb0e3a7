import { DASHBOARD_MODULES, STREAM_KINDS, STREAM_NAMES, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { requestSchema, responseSchema, secret } from '../schemas.js';
import { SseBroker } from '../sse.js';

const streamToken = responseSchema('streamToken', {
  type: 'object', required: ['token', 'expires_in'],
  properties: {
    token: { type: 'string', description: 'A stream-only token: give it as ?token= on the stream paths; refused everywhere else' },
    expires_in: { type: 'integer', description: 'Seconds it stays valid (a stream opened with it stays open after)' },
  },
});

/** The `data:` of one event; listed for the OpenAPI document, the stream itself is text/event-stream. */
const streamEvent = responseSchema('streamEvent', {
  type: 'object', required: ['kind', 'ts'],
  properties: {
    kind: { type: 'string', description: 'What to refetch; `resync` (first after a reconnect with Last-Event-ID): everything' },
    ts: { type: 'string', format: 'date-time', description: 'When the newest change it stands for happened' },
    site_id: { type: 'string', description: 'The site (hotspot) when every change it stands for was at that one site' },
  },
});

const streamQuery = requestSchema<{ token?: string }>('streamQuery', {
  type: 'object', required: [], additionalProperties: false,
  properties: { token: secret({ type: 'string', description: 'A stream token (POST .../stream-token), for clients that cannot send headers (EventSource)' } as const) },
});

/** Server-sent-event streams of the dashboard and their tokens, under /api/v1/tenants/me/ (docs/dashboard-api.md, Streams). */
const RECONNECTS_METRIC = 'stream_reconnects_total';

export function streamRoutes(engine: Engine): Route[] {
  // Made on the first stream request: the route table is also built where no engine runs (the OpenAPI document).
  let broker: SseBroker | undefined;
  const sse = (): SseBroker => {
    if (broker) return broker;
    engine.metrics.counter(RECONNECTS_METRIC, 'Stream requests that are reconnects (EventSource sent Last-Event-ID), by stream: the spec\'s reconnect target', 'stream');
    return (broker = new SseBroker(engine.streams, engine.config.streams, engine.metrics, engine.log.child({ component: 'sse' })));
  };
  return [
    route({
      method: 'post', path: '/api/v1/tenants/me/stream-token', surface: 'dashboard', auth: true, readOnly: true, module: DASHBOARD_MODULES,
      status: 201, responseSchema: streamToken,
      summary: 'Mint a stream-only token (5 minutes) for ?token= on the streams: EventSource cannot send headers; any role',
      handler: async ({ principal }) => ({ status: 201, body: await engine.credentials.mintStreamToken(principal) }),
    }),
    ...STREAM_NAMES.map((name) => route({
      method: 'get', path: `/api/v1/tenants/me/stream/${name}`, surface: 'dashboard', auth: true, streamToken: true, module: DASHBOARD_MODULES,
      headers: ['last-event-id'], querySchema: streamQuery, responseType: 'text/event-stream', responseSchema: streamEvent,
      summary: `Server-sent events: invalidations {kind, ts, site_id?} with kinds ${Object.values(STREAM_KINDS[name]).join(', ')}, and resync; `
        + 'credentials in the headers or a stream token in ?token=',
      errors: {
        429: 'too_many_streams: this credential, tenant or server holds its most open streams (STREAM_MAX_PER_PRINCIPAL, _PER_TENANT, _PER_PROCESS)',
        503: 'service_unavailable: the event stream cannot be read now',
      },
      handler: async ({ principal, headers }) => {
        // The credential behind the request: a stream token names the one that minted it (its subject), so
        // tokens minted in a loop count against the same place as the key or login that minted them.
        const credential = principal.via === 'stream_token' ? principal.subject : `${principal.via}:${principal.subject}`;
        const attach = await sse().join(principal.tenant.id, credential, name);
        // EventSource sends the last id it saw when it reconnects: it may have missed events meanwhile.
        const resync = headers['last-event-id'] !== '';
        if (resync) engine.metrics.inc(RECONNECTS_METRIC, name);
        return { status: 200, body: null, takeover: (ex) => attach(ex, resync) };
      },
    })),
  ];
}
