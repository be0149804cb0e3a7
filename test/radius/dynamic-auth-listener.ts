import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { Attr, PacketWriter, RadiusCrypto, checkFraming, decodePacket, findAttribute, type RadiusPacket } from '../../radius/index.js';
import { sleep } from './helpers.js';
import { arrivalsRead } from '../support/poll.js';

const rc = new RadiusCrypto();
const ZERO_AUTHENTICATOR = Buffer.alloc(16);

/** A request the engine sent to the test NAS's Dynamic Authorization port (RFC 5176). */
export interface DaRequest {
  msg: Buffer;
  code: number;
  identifier: number;
  at: number;
  packet: RadiusPacket;
  /** Request Authenticator and Message-Authenticator both check out with the NAS's secret. */
  signed: boolean;
}

export type DaAnswer = { code: number; errorCause?: number } | null;

/**
 * The NAS's RFC 5176 server side: records every request, and answers it as
 * `answer` decides (default: ACK), with a Response Authenticator and a
 * Message-Authenticator computed over the request's authenticator.
 */
export class DynamicAuthListener {
  readonly received: DaRequest[] = [];
  answer: (r: DaRequest) => DaAnswer = (r) => ({ code: r.code + 1 });
  private readonly writer = new PacketWriter();

  private constructor(private readonly socket: Socket, private readonly secret: string) {
    socket.on('message', (msg, rinfo) => this.onMessage(msg, rinfo));
  }

  static open(ip: string, secret: string): Promise<DynamicAuthListener> {
    const s = createSocket('udp4');
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.bind(0, ip, () => resolve(new DynamicAuthListener(s, secret)));
    });
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** The first request from index `from` on that `pred` accepts, or a failure after `ms`. */
  async waitFor(pred: (r: DaRequest) => boolean, ms: number, from = 0): Promise<DaRequest> {
    const until = Date.now() + ms;
    for (;;) {
      const hit = this.received.slice(from).find(pred);
      if (hit) return hit;
      if (Date.now() >= until) {
        await arrivalsRead();
        const late = this.received.slice(from).find(pred);
        if (late) return late;
        throw new Error(`no matching Dynamic Authorization request within ${ms} ms`);
      }
      await sleep(20);
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private onMessage(msg: Buffer, rinfo: RemoteInfo): void {
    const len = checkFraming(msg);
    const packet = len < 0 ? null : decodePacket(msg);
    if (!packet) return;
    const ma = findAttribute(msg, len, Attr.MESSAGE_AUTHENTICATOR);
    const signed = rc.verifyRequestAuthenticator(msg, len, this.secret)
      && ma >= 0 && rc.verifyMessageAuthenticator(msg, len, ma, this.secret, ZERO_AUTHENTICATOR);
    const r: DaRequest = { msg: Buffer.from(msg), code: msg[0]!, identifier: msg[1]!, at: Date.now(), packet, signed };
    this.received.push(r);
    const a = signed ? this.answer(r) : null;
    if (!a) return;
    const w = this.writer.begin(a.code, r.identifier).messageAuthenticator();
    if (a.errorCause !== undefined) w.uint32(Attr.ERROR_CAUSE, a.errorCause);
    this.socket.send(w.finishReply(msg.subarray(4, 20), this.secret), rinfo.port, rinfo.address);
  }
}
