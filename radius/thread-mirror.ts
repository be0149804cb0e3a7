import {
  MIRROR_HITS_HELP, MIRROR_HITS_METRIC, MirrorView, macAuthDevice, normalizeMac, portOf,
  type AccessDecision, type AccessRequestMsg, type Metrics, type MirrorShare, type MirroredAnswers,
} from '../engine/index.js';

/** How long a RADIUS thread gathers what it answered from the mirror before it tells the main thread. */
const REPORT_MS = 100;
/** Ports listed per NAS in one report: a NAS numbering NAS-Port per session must not make one unbounded message. */
const MAX_PORTS = 256;

interface Tally {
  answers: MirroredAnswers;
  ports: Set<string>;
}

/**
 * A RADIUS thread's read of the actors' auth mirror (engine/sessions/mirror-view.ts):
 * a device's re-check (MAC authentication) whose accept the actor published is
 * answered on this thread, without the hop to the main thread and back. What
 * the main thread would have done beside the answer (the decision for the
 * dashboard, the NAS's presence) it is told in a report every REPORT_MS
 * (RadiusHandler.answeredFromMirror): counts per NAS and the ports seen.
 */
export class ThreadMirror {
  private view: MirrorView | null = null;
  private tallies = new Map<string, Tally>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly metrics: Metrics, private readonly report: (answers: MirroredAnswers[]) => void) {
    metrics.counter(MIRROR_HITS_METRIC, MIRROR_HITS_HELP);
  }

  /** The mirror's shared memory, as the main thread posted it (again after each change); null: the engine has none. */
  share(share: MirrorShare | null): void {
    if (!share) return;
    if (this.view) this.view.share(share);
    else this.view = MirrorView.over(share);
  }

  /** The actor's published accept for this request, counted for the report; null: the request goes to the engine. */
  answer(m: AccessRequestMsg): AccessDecision | null {
    if (this.view === null) return null;
    const device = macAuthDevice(m, normalizeMac(m.userName));
    if (!device) return null;
    const nas = m.nas;
    const decision = this.view.lookup(nas.tenantId, nas.hotspotId, device, nas.id, m.userName, m.ssid ?? '');
    if (decision) this.tally(m);
    return decision;
  }

  /** Sends what is gathered now (the thread is stopping). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.tallies.size === 0) return;
    const answers = [...this.tallies.values()].map((t) => t.answers);
    this.tallies = new Map();
    this.report(answers);
  }

  private tally(m: AccessRequestMsg): void {
    this.metrics.inc(MIRROR_HITS_METRIC);
    let t = this.tallies.get(m.nas.id);
    if (t === undefined) this.tallies.set(m.nas.id, (t = { answers: { nasId: m.nas.id, count: 0, at: 0, ports: [] }, ports: new Set() }));
    t.answers.count++;
    t.answers.at = Date.now();
    const port = portOf(m);
    if (port && t.ports.size < MAX_PORTS && !t.ports.has(port)) {
      t.ports.add(port);
      t.answers.ports.push({ nasPort: m.nasPort, nasPortId: m.nasPortId, calledStationId: m.calledStationId });
    }
    this.timer ??= setTimeout(() => this.flush(), REPORT_MS);
  }
}
