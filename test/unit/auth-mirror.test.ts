import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createLogger, projectPath } from '../../engine/index.js';
import { AuthMirrorReader, AuthMirrorWriter, hotspotKey, type MirroredAccept } from '../../engine/sessions/auth-mirror.js';
import { ChangingDevices, MirrorView } from '../../engine/sessions/mirror-view.js';
import { HotspotActor, type ActorContext, type TimedSession } from '../../engine/sessions/hotspot-actor.js';
import { sessionFromHash, type SessionStore } from '../../engine/sessions/session-store.js';
import { TimerWheel } from '../../engine/sessions/timer-wheel.js';
import { mac } from '../support/macs.js';

/**
 * The table through which an actor thread's accepts reach the main thread:
 * what one side writes the other reads back exactly, stale or foreign
 * entries are misses, growth hands over a new table, and a reader racing a
 * writer on another thread never sees half of one accept and half of another.
 */

const NOW = Date.parse('2026-11-24T12:00:00Z');

function accept(over: Partial<MirroredAccept> = {}): MirroredAccept {
  return {
    sid: 'sess_abcdefghijklmnop', nasId: 'nas_1', nasUser: 'guest', untilMs: NOW + 3_600_000, validUntilMs: NOW + 3_600_000,
    idleSec: 900, downKbps: 10_000, upKbps: 2_000, quotaBytes: null, ...over,
  };
}

function pair(capacity?: number): { writer: AuthMirrorWriter; reader: AuthMirrorReader; tables: SharedArrayBuffer[] } {
  const reader = new AuthMirrorReader();
  const tables: SharedArrayBuffer[] = [];
  const writer = new AuthMirrorWriter((t) => {
    tables.push(t);
    reader.setTable(0, t);
  }, capacity);
  return { writer, reader, tables };
}

describe('auth mirror', () => {
  it('reads back what was published, for that hotspot, device, NAS and User-Name only, while it is valid', () => {
    const { writer, reader } = pair();
    writer.publish('tn_1/hs_1', mac(1), accept({ quotaBytes: 5_000_000_000 }));
    const hit = reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(1), 'nas_1', 'guest', NOW + 10_000);
    expect(hit).toEqual({
      accept: true, sessionId: 'sess_abcdefghijklmnop', sessionTimeout: 3590, idleTimeout: 900, downKbps: 10_000, upKbps: 2_000,
      quotaBytes: 5_000_000_000,
    });
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(1), 'nas_1', '', NOW)?.accept).toBe(true); // no User-Name: the NAS decides
    expect(reader.lookup(0, hotspotKey('tn_1/hs_2'), mac(1), 'nas_1', 'guest', NOW)).toBeNull();
    expect(reader.lookup(0, hotspotKey('tn_2/hs_1'), mac(1), 'nas_1', 'guest', NOW)).toBeNull();
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(2), 'nas_1', 'guest', NOW)).toBeNull();
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(1), 'nas_2', 'guest', NOW)).toBeNull();
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(1), 'nas_1', 'other', NOW)).toBeNull();
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), 'not a mac', 'nas_1', 'guest', NOW)).toBeNull();
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(1).toUpperCase(), 'nas_1', 'guest', NOW)?.accept).toBe(true); // hex in either case
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), `${mac(1).slice(0, 15)}0g`, 'nas_1', 'guest', NOW)).toBeNull();
    expect(reader.lookup(1, hotspotKey('tn_1/hs_1'), mac(1), 'nas_1', 'guest', NOW)).toBeNull(); // another thread's table
    // Not at or past its validity, which never outlasts the session.
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(1), 'nas_1', 'guest', NOW + 3_600_000)).toBeNull();
    writer.publish('tn_1/hs_1', mac(3), accept({ validUntilMs: NOW + 10_000, untilMs: NOW + 5_000 }));
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(3), 'nas_1', 'guest', NOW + 4_999)).toMatchObject({ sessionTimeout: 1 });
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(3), 'nas_1', 'guest', NOW + 5_000)).toBeNull();
    expect(reader.hits).toBe(4);
  });

  it('forgets what was taken back, one device or a whole hotspot, and takes a new answer in its place', () => {
    const { writer, reader } = pair();
    for (let i = 0; i < 50; i++) writer.publish(`tn_1/hs_${i % 2}`, mac(i), accept({ sid: `sess_${String(i).padStart(16, '0')}` }));
    writer.remove('tn_1/hs_0', mac(4));
    expect(reader.lookup(0, hotspotKey('tn_1/hs_0'), mac(4), 'nas_1', 'guest', NOW)).toBeNull();
    expect(reader.lookup(0, hotspotKey('tn_1/hs_0'), mac(6), 'nas_1', 'guest', NOW)).toMatchObject({ sessionId: `sess_${'6'.padStart(16, '0')}` });
    writer.publish('tn_1/hs_0', mac(4), accept({ sid: 'sess_replacement00000', untilMs: NOW + 60_000, validUntilMs: NOW + 60_000 }));
    expect(reader.lookup(0, hotspotKey('tn_1/hs_0'), mac(4), 'nas_1', 'guest', NOW)).toMatchObject({ sessionId: 'sess_replacement00000', sessionTimeout: 60 });
    writer.removeHotspot('tn_1/hs_1');
    for (let i = 0; i < 50; i++) {
      const hit = reader.lookup(0, hotspotKey(`tn_1/hs_${i % 2}`), mac(i), 'nas_1', 'guest', NOW);
      expect(hit === null, `device ${i}`).toBe(i % 2 === 1);
    }
    expect(writer.size).toBe(25);
  });

  it('grows past its capacity: the old table is retired at once, the new one holds every live entry', () => {
    const { writer, reader, tables } = pair(1024);
    const stale = new AuthMirrorReader();
    stale.setTable(0, tables[0]!);
    for (let i = 0; i < 3000; i++) {
      writer.publish('tn_1/hs_1', mac(i), accept());
      if (i % 3 === 0) writer.remove('tn_1/hs_1', mac(i));
    }
    expect(tables.length).toBeGreaterThan(1);
    expect(stale.lookup(0, hotspotKey('tn_1/hs_1'), mac(1), 'nas_1', 'guest', NOW)).toBeNull();
    for (let i = 0; i < 3000; i++) {
      expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), mac(i), 'nas_1', 'guest', NOW) === null, `device ${i}`).toBe(i % 3 === 0);
    }
    expect(writer.size).toBe(2000);
  });

  it('a reader racing a writer on another thread sees whole accepts only', async () => {
    // The writer thread rewrites one device's entry over and over with two accepts that differ in
    // every field; each hit must be one of the two, never a mix.
    const reader = new AuthMirrorReader();
    const url = new URL(`file://${projectPath('dist', 'engine', 'sessions', 'auth-mirror.js')}`).href;
    const worker = new Worker(`
      const { parentPort } = require('node:worker_threads');
      import(${JSON.stringify(url)}).then(({ AuthMirrorWriter }) => {
        const w = new AuthMirrorWriter((t) => parentPort.postMessage(t));
        const a = { sid: 'sess_aaaaaaaaaaaaaaaa', nasId: 'nas_1', nasUser: 'guest', untilMs: ${NOW} + 1000000, validUntilMs: ${NOW} + 1000000, idleSec: 100, downKbps: 1000, upKbps: 100, quotaBytes: 1000 };
        const b = { sid: 'sess_bbbbbbbbbbbbbbbb', nasId: 'nas_1', nasUser: 'guest', untilMs: ${NOW} + 2000000, validUntilMs: ${NOW} + 2000000, idleSec: 200, downKbps: 2000, upKbps: 200, quotaBytes: 2000 };
        const end = Date.now() + 1500;
        let i = 0;
        while (Date.now() < end) for (let k = 0; k < 1000; k++) w.publish('tn_1/hs_1', '02:00:00:00:00:01', (i++ & 1) ? a : b);
        parentPort.postMessage('done');
      });
    `, { eval: true });
    let done = false;
    worker.on('message', (m: SharedArrayBuffer | string) => {
      if (m === 'done') done = true;
      else reader.setTable(0, m as SharedArrayBuffer);
    });
    const seen = new Map<string, number>();
    const whole = new Set([
      'sess_aaaaaaaaaaaaaaaa 1000 100 1000 100 1000', 'sess_bbbbbbbbbbbbbbbb 2000 200 2000 200 2000',
    ]);
    let mixed = '';
    while (!done) {
      for (let k = 0; k < 2000; k++) {
        const d = reader.lookup(0, hotspotKey('tn_1/hs_1'), '02:00:00:00:00:01', 'nas_1', 'guest', NOW);
        if (!d || !d.accept) continue;
        const key = `${d.sessionId} ${d.sessionTimeout} ${d.idleTimeout} ${d.downKbps} ${d.upKbps} ${d.quotaBytes}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        if (!whole.has(key)) mixed ||= key;
      }
      await new Promise((r) => setImmediate(r));
    }
    await worker.terminate();
    expect(mixed).toBe('');
    expect([...seen.keys()].sort()).toEqual([...whole].sort()); // both seen: the race really ran
  });

  it('a view over the shared memory reads what the main thread reads, and a device being changed is a miss on both', () => {
    // The main thread's view, and a RADIUS thread's made from what the main thread posts it (MirrorShare).
    const main = new MirrorView(1, new ChangingDevices());
    const tables: SharedArrayBuffer[] = [];
    const writer = new AuthMirrorWriter((t) => {
      tables.push(t);
      main.setTable(0, t);
    });
    const radius = MirrorView.over({ tables: [tables[0]!], changing: main.changing.buffer });
    const until = Date.now() + 3_600_000;
    for (const n of [1, 2]) writer.publish('tn_1/hs_1', mac(n), accept({ untilMs: until, validUntilMs: until }));
    for (const view of [main, radius]) expect(view.lookup('tn_1', 'hs_1', mac(1), 'nas_1', 'guest', '')).toMatchObject({ accept: true, sessionId: 'sess_abcdefghijklmnop' });

    // An accounting report of device 1 leaves for the actor: neither thread answers for it until the actor has it.
    const ref = main.ref('tn_1', 'hs_1');
    const marks = [main.changing.mark(ref.key, mac(1)), main.changing.mark(ref.key, mac(1))];
    for (const view of [main, radius]) {
      expect(view.lookup('tn_1', 'hs_1', mac(1), 'nas_1', 'guest', '')).toBeNull();
      expect(view.lookup('tn_1', 'hs_1', mac(2), 'nas_1', 'guest', '')).toMatchObject({ accept: true });
    }
    main.changing.unmark(marks[0]!);
    expect(radius.lookup('tn_1', 'hs_1', mac(1), 'nas_1', 'guest', '')).toBeNull(); // one still on its way
    main.changing.unmark(marks[1]!);
    expect(radius.lookup('tn_1', 'hs_1', mac(1), 'nas_1', 'guest', '')).toMatchObject({ accept: true });
    expect(main.changing.mark(ref.key, 'not a mac')).toBe(-1);

    // The table grew: the RADIUS thread's view takes the new one when it is posted, and misses meanwhile.
    for (let n = 3; n < 1_000; n++) writer.publish('tn_1/hs_1', mac(n), accept({ untilMs: until, validUntilMs: until }));
    expect(tables.length).toBeGreaterThan(1);
    expect(radius.lookup('tn_1', 'hs_1', mac(1), 'nas_1', 'guest', '')).toBeNull();
    radius.share({ tables: [tables.at(-1)!], changing: main.changing.buffer });
    expect(radius.lookup('tn_1', 'hs_1', mac(999), 'nas_1', 'guest', '')).toMatchObject({ accept: true });
  });

  it('an actor that lets its hotspot go while a Redis read is in flight keeps nothing and publishes nothing', async () => {
    // The lease went to another process (or the supervisor gave up) while auth() waited for Redis:
    // what the read brings back must not come alive in an actor that owns nothing.
    const now = Date.now();
    const device = '02:00:00:00:00:01';
    let answer!: () => void;
    const gate = new Promise<void>((r) => { answer = r; });
    const store = {
      loadLive: async () => [],
      liveByMac: async () => {
        await gate;
        return sessionFromHash({ sid: 'sess_aaaaaaaaaaaaaaaa', mac: device, until: String(now + 3_600_000), created: String(now), nas: 'nas_1', nuser: 'guest' });
      },
      rememberNas: async () => undefined,
    } as unknown as SessionStore;
    const { writer, reader } = pair();
    const wheel = new TimerWheel<TimedSession>(now);
    const ctx: ActorContext = { store, wheel, log: createLogger('silent'), now: () => Date.now(), nas: async () => ({ outcome: 'ack' }), mirror: writer };
    const actor = new HotspotActor('tn_1', 'hs_1', 'UTC', ctx);
    await actor.load();
    const asked = actor.auth({ t: 'auth', id: 1, tenant: 'tn_1', hs: 'hs_1', tz: 'UTC', nasId: 'nas_1', mac: device, userName: 'guest' });
    await new Promise((r) => setImmediate(r));
    actor.release();
    answer();
    expect(await asked).toMatchObject({ accept: false });
    expect(actor.size).toBe(0);
    expect(wheel.size).toBe(0);
    expect(writer.size).toBe(0);
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), device, 'nas_1', 'guest', Date.now())).toBeNull();
    // Loaded again (the lease came back), it answers as before and publishes.
    await actor.load();
    expect(await actor.auth({ t: 'auth', id: 2, tenant: 'tn_1', hs: 'hs_1', tz: 'UTC', nasId: 'nas_1', mac: device, userName: 'guest' })).toMatchObject({ accept: true });
    expect(reader.lookup(0, hotspotKey('tn_1/hs_1'), device, 'nas_1', 'guest', Date.now())).toMatchObject({ accept: true, sessionId: 'sess_aaaaaaaaaaaaaaaa' });
  });
});
