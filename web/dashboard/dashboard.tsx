import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, errorSentence, type Session } from '../shared/index.js';
import { get } from './api.js';
import type { DashboardKey } from './messages.js';
import { useDash } from './parts.js';
import { StreamHub, STREAMS, type StreamName, type StreamStatus } from './stream-hub.js';
import { GridTiles, TopStrip } from './tiles.js';
import type { ActiveSessions, Audit, Decisions, Incidents, JitApprovals, KpisExtra, Overview, SiteMetrics, Sites, Switch, Topology } from './types.js';
import { LiveContext, useResource, WIDGET_POLL_MS, type LiveValue } from './use-resource.js';
import { AuditTimeline } from './widgets/audit.js';
import { FailReasons } from './widgets/fail-reasons.js';
import { IncidentQueue } from './widgets/incidents.js';
import { JitWidget } from './widgets/jit.js';
import { LiveSessions } from './widgets/live-sessions.js';
import { SiteHealth } from './widgets/site-health.js';
import { SwitchPortMap } from './widgets/switch-ports.js';
import { TopologyWidget } from './widgets/topology.js';

/** The top strip and the grid tiles refresh this often (the interface's limit "Dashboard KPI refresh: 10 s"). */
export const KPI_REFRESH_MS = 10_000;
/** Live sessions listed in the live-sessions widget (sessions/active's first page). */
const LIVE_ROWS = 8;
/** Reconnects of several streams at once become one full refetch. */
const RESYNC_DEBOUNCE_MS = 300;
/** What a site row (and the top strip) shows changes with sessions, sign-ins and NAS presence (live-sessions) and incidents (health, the open count). */
const SITES_STREAMS: readonly StreamName[] = ['live-sessions', 'incidents'];
/**
 * The service answers a site's `degraded` for an open incident from a cache
 * up to 2 s old (docs/dashboard-api.md, Freshness): the rows refetch this
 * long after an incident's invalidation, so that one fetch sees the change.
 */
const SITES_SETTLE = { incidents: 2_000 + 250 } as const;

/**
 * The operations dashboard. The streams open once the first overview has
 * answered (a tenant without the dashboard in its package gets one sentence,
 * not four failing streams). A `resync`, and any stream reopening after a
 * drop, bumps `epoch`: every piece of the page refetches, since events may
 * have been missed meanwhile.
 */
export function Dashboard(props: { session: Session }): preact.JSX.Element {
  const [hub, setHub] = useState<StreamHub | null>(null);
  const [status, setStatus] = useState<StreamStatus | null>(null);
  const [epoch, setEpoch] = useState(0);
  const [ready, setReady] = useState(false);

  useEffect(() => {
    if (!ready) return;
    const h = new StreamHub();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const resync = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => setEpoch((e) => e + 1), RESYNC_DEBOUNCE_MS);
    };
    const offs = STREAMS.map((name) => h.subscribe(name, (inv) => { if (inv.kind === 'resync') resync(); }));
    h.start();
    h.onStatus(setStatus);
    setHub(h);
    return () => {
      clearTimeout(timer);
      for (const off of offs) off();
      h.stop();
    };
  }, [ready]);

  const live = useMemo<LiveValue>(() => ({ hub, status, epoch }), [hub, status, epoch]);
  const onReady = useCallback(() => setReady(true), []);
  return (
    <LiveContext.Provider value={live}>
      <Board admin={props.session.roles.includes('admin')} status={status} onReady={onReady} />
    </LiveContext.Provider>
  );
}

function Board(props: { admin: boolean; status: StreamStatus | null; onReady(): void }): preact.JSX.Element {
  const { t, raw } = useDash();
  // Every piece is refetched on the invalidations of what it shows AND polled (the tiles every 10 s, the widgets every
  // 60 s, for what changes with no event): pieces that show one figure side by side follow the same events, so they
  // agree within a fetch of each other, and each one says how old it is (Freshness). A widget that only followed
  // session_started once read the sign-in counts before they were written and kept that until the page reloaded.
  const overview = useResource((s) => get<Overview>('dashboard/overview', s), { everyMs: KPI_REFRESH_MS, stream: SITES_STREAMS, settleMs: SITES_SETTLE });
  const extra = useResource((s) => get<KpisExtra>('dashboard/kpis-extra', s), { everyMs: KPI_REFRESH_MS, stream: 'live-sessions' });
  const incidents = useResource((s) => get<Incidents>('incidents', s, { state: 'open', limit: 50 }), { stream: 'incidents', everyMs: WIDGET_POLL_MS });
  const audit = useResource((s) => get<Audit>('audit', s, { limit: 15 }), { stream: 'audit', everyMs: WIDGET_POLL_MS });
  const sessions = useResource((s) => get<ActiveSessions>('sessions/active', s, { limit: LIVE_ROWS }), { stream: 'live-sessions', everyMs: WIDGET_POLL_MS });
  const jit = useResource((s) => get<JitApprovals>('jit-approvals', s), { stream: 'jit-approvals', everyMs: WIDGET_POLL_MS });
  // A site row's live count and NAS follow the session and NAS invalidations, its health an incident's too.
  const sites = useResource((s) => get<Sites>('sites', s), { stream: SITES_STREAMS, settleMs: SITES_SETTLE, everyMs: WIDGET_POLL_MS });
  const metrics = useResource((s) => get<SiteMetrics>('sites/metrics', s), { stream: 'live-sessions', everyMs: WIDGET_POLL_MS });
  const switches = useResource((s) => get<{ data: Switch[] }>('switches', s), { stream: 'live-sessions', everyMs: WIDGET_POLL_MS });
  const topology = useResource((s) => get<Topology>('topology', s), { stream: 'live-sessions', everyMs: WIDGET_POLL_MS });
  const decisions = useResource((s) => get<Decisions>('decisions', s, { limit: 1 }), { stream: 'live-sessions', everyMs: WIDGET_POLL_MS });

  useEffect(() => { if (overview.data) props.onReady(); }, [overview.data !== null]);
  const names = useMemo(() => new Map((sites.data?.data ?? []).map((s) => [s.id, s.name])), [sites.data]);
  const siteName = useCallback((id: string | null): string => (id ? names.get(id) ?? id : ''), [names]);

  const refused = overview.error instanceof ApiError && overview.error.status === 403 && overview.error.code === 'module_not_licensed';
  if (refused) {
    return (
      <>
        <h1>{t('dashboard_heading')}</h1>
        <p class="error-summary" role="alert">{errorSentence(overview.error, raw)}</p>
      </>
    );
  }
  const down = props.status ? STREAMS.filter((n) => !props.status![n]) : [];
  return (
    <div class="dash">
      <h1>{t('dashboard_heading')}</h1>
      {down.length > 0 && (
        <p class="stale-sign banner" role="status">{t('streams_down', { names: down.map((n) => t(`stream_${n}` as DashboardKey)).join(', ') })}</p>
      )}
      <TopStrip overview={overview} />
      <GridTiles overview={overview} extra={extra} incidents={incidents} />
      <div class="widgets">
        <LiveSessions res={sessions} siteName={siteName} />
        <IncidentQueue res={incidents} admin={props.admin} />
        <SiteHealth sites={sites} metrics={metrics} />
        <AuditTimeline res={audit} siteName={siteName} />
        <FailReasons res={decisions} />
        <JitWidget res={jit} siteName={siteName} />
        <SwitchPortMap switches={switches} />
        <TopologyWidget res={topology} />
      </div>
    </div>
  );
}
