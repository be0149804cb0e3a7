import type { MessagePort } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { postBatch, readBatch } from '../../engine/sessions/message-codec.js';
import type { AcctMsg, AuthMsg, NasCommand, Reply, StartedMsg } from '../../engine/sessions/messages.js';

/** engine/sessions/message-codec.ts: what crosses between the main thread and an actor thread arrives as it left. */
describe('actor message batches', () => {
  const packr = new Packr({ useRecords: false });

  /** One batch through postBatch, and back through readBatch, as the other thread reads it. */
  function roundTrip(batch: unknown[]): unknown[] {
    const sent: Uint8Array[] = [];
    const port = { postMessage: (bytes: Uint8Array, transfer: ArrayBuffer[]) => {
      expect(transfer).toEqual([bytes.buffer]);
      sent.push(bytes);
    } } as unknown as MessagePort;
    postBatch(port, packr, batch);
    expect(sent).toHaveLength(1);
    return readBatch(packr, sent[0]!);
  }

  // Required<>: a field added to a message type fails to compile here until the test, and so the codec, carries it.
  const acct: Required<AcctMsg> = {
    t: 'acct', tenant: 'tn_1', hs: 'hs_1', tz: 'Europe/Istanbul', id: 7, nasId: 'nas_1', status: 'stop', mac: '02:00:00:00:00:01',
    userName: 'code1', acctSessionId: 'acct-1', inOctets: 2 ** 40, outOctets: 0, ip: '10.0.0.7', ssid: 'Guest', apName: 'AP-1', signal: -61,
    reason: 'idle_timeout', delay: 3, forwarded: true,
  };
  const auth: Required<AuthMsg> = {
    t: 'auth', tenant: 'tn_1', hs: 'hs_1', tz: 'UTC', id: 8, nasId: 'nas_1', mac: '02:00:00:00:00:02', userName: 'u', ip: '10.0.0.8', ssid: 'Guest',
    forwarded: false,
  };
  const failed: Required<Reply> = { t: 'reply', id: 9, ok: false, value: null, code: 'session_engine_timeout', status: 503, message: 'try again' };

  it('carries every field of the array-encoded messages', () => {
    expect(roundTrip([acct, auth, failed])).toStrictEqual([acct, auth, failed]);
  });

  it('reads a field the sender left out as absent, and nested values whole', () => {
    const bare: AcctMsg = { t: 'acct', tenant: 't', hs: 'h', tz: 'UTC', id: 1, nasId: 'n', status: 'interim', mac: '', userName: '', acctSessionId: 'a', inOctets: 1, outOctets: 2 };
    const ok: Reply = { t: 'reply', id: 2, ok: true, value: { accept: true, sessionTimeout: 3600, attributes: { 'WISPr-Bandwidth-Max-Down': 1000 } } as unknown as Reply['value'] };
    const [a, r] = roundTrip([bare, ok]) as [AcctMsg, Reply];
    expect(a).toEqual(bare);
    expect(a.ip).toBeUndefined();
    expect(a.signal).toBeUndefined();
    expect(r).toEqual(ok);
    expect(r.code).toBeUndefined();
  });

  it('sends every other message as the object it is', () => {
    const started: StartedMsg = { t: 'started', tenant: 't', hs: 'h', tz: 'UTC', id: 3, sid: 's', mac: 'm', replaced: '', coa: true };
    const nas: NasCommand = { t: 'nas', id: 4, tenant: 't', hs: 'h', nasId: 'n', command: 'coa', userName: 'u', mac: 'm', acctSessionId: 'a', ip: '', sessionTimeout: 60 };
    expect(roundTrip([started, nas, { t: 'nas_result', id: 4, result: { outcome: 'ack' } }])).toStrictEqual([started, nas, { t: 'nas_result', id: 4, result: { outcome: 'ack' } }]);
  });

  it('refuses an array it does not know, rather than guess', () => {
    const bytes = new Uint8Array(packr.pack([[99, 'x']]));
    expect(() => readBatch(packr, bytes)).toThrow(/unknown kind 99/);
  });
});
