import { parentPort, workerData } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import {
  Metrics, NasRegistry, createLogger,
  type AccessDecision, type AccessRequestMsg, type AccountingMsg, type NasRecord, type NasRow, type RadiusHandler,
} from '../engine/index.js';
import { RadiusDictionary } from './radius-dictionary.js';
import { RadiusServer } from './radius-server.js';
import { ThreadMirror } from './thread-mirror.js';
import type { FromRadiusThread, RadiusThreadData, ReplyItem, RequestItem, ToRadiusThread } from './radius-thread-messages.js';

/**
 * The entry of one RADIUS thread (radius-threads.ts): a RadiusServer on the
 * shared UDP ports (SO_REUSEPORT), with everything per packet done here:
 * framing, the NAS by source address (a copy of the registry the main thread
 * keeps current), the authenticators, duplicates (RFC 5080), decoding,
 * encoding and sending. A device's re-check the actors' auth mirror answers
 * is answered here (ThreadMirror); any other decoded request crosses to the
 * main thread, where the engine decides (RadiusGateway), and only the
 * decision comes back.
 */

const data = workerData as RadiusThreadData;
const port = parentPort!;
const log = createLogger(data.logLevel).child({ component: 'radius', thread: data.index });
const packr = new Packr({ useRecords: false });
const metrics = new Metrics();
const registry = new NasRegistry(null, log);
/** How often the main thread hears this thread's metrics and counters. */
const REPORT_MS = 1_000;

type Waiter = { resolve: (v: AccessDecision | undefined) => void; reject: (e: Error) => void };
const waiting = new Map<number, Waiter>();
let seq = 0;
let outbox: RequestItem[] = [];
let flushQueued = false;
/** A NAS record as it crosses to the main thread: no secret (the main thread has its own registry). */
const views = new WeakMap<NasRecord, NasRecord>();

function ask(kind: 0 | 1, msg: AccessRequestMsg | AccountingMsg): Promise<AccessDecision | undefined> {
  let nas = views.get(msg.nas);
  if (!nas) views.set(msg.nas, (nas = { ...msg.nas, secret: '' }));
  const id = ++seq;
  outbox.push([id, kind, { ...msg, nas }]);
  if (!flushQueued) {
    flushQueued = true;
    // One message per event loop turn, however many packets the turn read.
    setImmediate(flush);
  }
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

function flush(): void {
  flushQueued = false;
  if (outbox.length === 0) return;
  const bytes = new Uint8Array(packr.pack(outbox));
  outbox = [];
  port.postMessage(bytes, [bytes.buffer]);
}

function post(m: FromRadiusThread): void {
  port.postMessage(m);
}

const mirror = new ThreadMirror(metrics, (answers) => post({ t: 'mirrored', answers }));

const handler: RadiusHandler = {
  nasByIp: (ip, identifier) => registry.byAddress(ip, identifier),
  authorize: (m) => mirror.answer(m) ?? (ask(0, m) as Promise<AccessDecision>),
  account: (m) => ask(1, m).then(() => undefined),
};

const server = new RadiusServer({
  handler, host: data.host, authPort: data.authPort, acctPort: data.acctPort, logger: log, metrics,
  dictionary: RadiusDictionary.load(undefined, data.dictionaryDir), reusePort: true, maxInFlight: data.maxInFlight,
});

const refused = new Error('the engine did not answer');

port.on('message', (m: Uint8Array | ToRadiusThread) => {
  if (m instanceof Uint8Array) {
    for (const [id, ok, value] of packr.unpack(m) as ReplyItem[]) {
      const w = waiting.get(id);
      if (!w) continue;
      waiting.delete(id);
      if (ok) w.resolve(value ?? undefined);
      else w.reject(refused);
    }
    return;
  }
  switch (m.t) {
    case 'nas': return registry.load(m.rows as NasRow[]);
    case 'mirror': return mirror.share(m.share);
    case 'start':
      registry.load(m.rows as NasRow[]);
      mirror.share(m.mirror);
      server.start().then(
        (ports) => post({ t: 'bound', ...ports }),
        (err: Error) => post({ t: 'bind_failed', message: err.message }),
      );
      return;
    case 'stop':
      void server.stop().then(() => {
        mirror.flush();
        post({ t: 'closed' });
      });
      return;
  }
});

setInterval(() => void metrics.snapshot().then((snapshot) => post({ t: 'report', snapshot, stats: server.stats() })), REPORT_MS).unref();
