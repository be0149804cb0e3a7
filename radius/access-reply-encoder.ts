import { NAS_REPLY_PROFILES, type AccessDecision, type NasRecord, type ReplyItem, type ReplySource } from '../engine/index.js';
import { Attr, Code, REPLY_ATTRIBUTES, TUNNEL_MEDIUM_IEEE_802, TUNNEL_TYPE_VLAN } from './attributes.js';
import { HEADER_LENGTH } from './codec.js';
import { RadiusErrors } from './errors.js';
import type { PacketWriter } from './packet-writer.js';
import type { RadiusDictionary } from './radius-dictionary.js';

const TWO_32 = 0x1_0000_0000;

/** Integer and text sources (engine/hotspots/nas-profiles.ts's ReplySource), numbered for the packet path's switch. */
const INT_SOURCES: Readonly<Partial<Record<ReplySource, number>>> = {
  session_timeout: 0, idle_timeout: 1, down_bps: 2, up_bps: 3, down_kbps: 4, up_kbps: 5,
  quota_octets: 6, quota_gigawords: 7, vlan: 8, tunnel_type_vlan: 9, tunnel_medium_802: 10,
};
const TEXT_SOURCES: Readonly<Partial<Record<ReplySource, number>>> = {
  session_id: 20, mikrotik_rate: 21, role: 22, filter_id: 23, vlan_text: 24,
};

/** One attribute of a compiled profile: vendor 0 for a standard attribute. */
interface Op { readonly vendorId: number; readonly code: number; readonly source: number }

/**
 * Encodes the engine's decision as Access-Accept or Access-Reject.
 *
 * What an Accept carries depends on the NAS's type, from the data table of
 * engine/hotspots/nas-profiles.ts: each profile is compiled here once, in the
 * constructor, into attribute numbers resolved from the dictionaries (a
 * missing or mistyped attribute fails start-up); `encode` walks the NAS's
 * list of numbers and writes those whose value is present. Every reply
 * starts with Message-Authenticator, whether or not the request carried one
 * (Blast-RADIUS, CVE-2024-3596).
 *
 * A NAS record without a type gets `generic`: every family at once (WISPr in
 * bit/s, ChilliSpot in kbit/s, MikroTik's rate string), as before types
 * existed; a NAS ignores vendors it does not know (RFC 2865 §5.26).
 */
export class AccessReplyEncoder {
  private readonly profiles = new Map<string, readonly Op[]>();
  private readonly generic: readonly Op[];
  /** The last MikroTik rate string and its rates: a venue's sessions mostly share one profile, and the text was made per packet. */
  private rate = { up: -1, down: -1, text: '' };

  constructor(dict: RadiusDictionary) {
    for (const [type, items] of Object.entries(NAS_REPLY_PROFILES)) {
      this.profiles.set(type, Object.freeze((items as readonly ReplyItem[]).map((item) => compile(dict, type, item))));
    }
    this.generic = this.profiles.get('generic')!;
  }

  /**
   * The reply to the Access-Request `request` of length `len` (checked by
   * checkFraming) from `nas`: its Identifier and Request Authenticator are
   * used and its Proxy-State attributes echoed.
   */
  encode(w: PacketWriter, request: Buffer, len: number, decision: AccessDecision, nas: NasRecord): Buffer {
    const requestAuthenticator = request.subarray(4, HEADER_LENGTH);
    if (!decision.accept) {
      w.begin(Code.ACCESS_REJECT, request[1]!).messageAuthenticator();
      if (decision.reason) w.string(Attr.REPLY_MESSAGE, decision.reason);
      w.copyAttributes(request, len, Attr.PROXY_STATE);
      return w.finishReply(requestAuthenticator, nas.secret);
    }
    // A NaN here would silently drop Session-Timeout, i.e. grant an endless
    // session: refuse to encode instead (the server then sends nothing).
    const { sessionTimeout, idleTimeout, downKbps, upKbps } = decision;
    if (!Number.isFinite(sessionTimeout) || !Number.isFinite(idleTimeout) || !Number.isFinite(downKbps) || !Number.isFinite(upKbps)) {
      throw RadiusErrors.RADIUS_BAD_VALUE(`decision for ${decision.sessionId} has a non-finite limit`);
    }
    const up = upKbps > 0 ? upKbps : 0;
    const down = downKbps > 0 ? downKbps : 0;
    // A limit of 0 means "no limit" to CoovaChilli and RouterOS: an exhausted
    // quota must not become an unlimited one, so send at least 1 octet.
    const quota = decision.quotaBytes === null ? -1 : Math.max(1, Math.floor(decision.quotaBytes));
    const reply = nas.reply;
    const vlan = reply?.vlan ?? 0;
    const ops = (nas.nasType !== undefined && this.profiles.get(nas.nasType)) || this.generic;
    w.begin(Code.ACCESS_ACCEPT, request[1]!).messageAuthenticator();
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      let n = -1;
      let text: string | null = null;
      switch (op.source) {
        // Session-Timeout always goes out, at least 1 s: without it, or at 0,
        // several NASes (CoovaChilli among them) set no limit at all.
        case 0: n = Math.max(1, sessionTimeout); break;
        case 1: if (idleTimeout > 0) n = idleTimeout; break;
        case 2: if (down) n = down * 1000; break;
        case 3: if (up) n = up * 1000; break;
        case 4: if (down) n = down; break;
        case 5: if (up) n = up; break;
        case 6: if (quota >= 0) n = quota % TWO_32; break;
        case 7: if (quota >= TWO_32) n = Math.floor(quota / TWO_32); break;
        case 8: if (vlan) n = vlan; break;
        case 9: if (vlan) n = TUNNEL_TYPE_VLAN; break;
        case 10: if (vlan) n = TUNNEL_MEDIUM_IEEE_802; break;
        case 20: text = decision.sessionId; break;
        case 21: if (up || down) text = this.rateText(up, down); break;
        case 22: text = reply?.role ?? null; break;
        case 23: text = reply?.filterId ?? null; break;
        case 24: if (vlan) text = String(vlan); break;
      }
      if (n >= 0) {
        if (op.vendorId) w.vendorUint32(op.vendorId, op.code, n);
        else w.uint32(op.code, n);
      } else if (text !== null) {
        if (op.vendorId) w.vendorString(op.vendorId, op.code, text);
        else w.string(op.code, text);
      }
    }
    w.copyAttributes(request, len, Attr.PROXY_STATE);
    return w.finishReply(requestAuthenticator, nas.secret);
  }

  /** MikroTik's "rx/tx" in kbit/s, read from the router's side: rx is what the guest sends (up). */
  private rateText(up: number, down: number): string {
    const r = this.rate;
    if (r.up !== up || r.down !== down) this.rate = { up, down, text: `${Math.floor(up)}k/${Math.floor(down)}k` };
    return this.rate.text;
  }
}

/** One profile item as numbers: its attribute from REPLY_ATTRIBUTES or the dictionaries, with a type that fits its source. */
function compile(dict: RadiusDictionary, profile: string, item: ReplyItem): Op {
  const where = `reply profile ${profile}, ${item.attribute}`;
  const std = REPLY_ATTRIBUTES[item.attribute];
  const a = std ? { vendorId: 0, code: std.code, type: std.type } : dict.attribute(item.attribute);
  if (a.vendorId === 0 && !std) throw RadiusErrors.RADIUS_DICTIONARY(where, 'a standard attribute the encoder does not know');
  const int = INT_SOURCES[item.value];
  const text = TEXT_SOURCES[item.value];
  if (int !== undefined && a.type === 'integer') return { vendorId: a.vendorId, code: a.code, source: int };
  if (text !== undefined && a.type === 'string') return { vendorId: a.vendorId, code: a.code, source: text };
  throw RadiusErrors.RADIUS_DICTIONARY(where, `the dictionary says ${a.type}, which cannot carry ${item.value}`);
}
