import type { AccessDecision } from '../engine/index.js';
import { Attr, Code, Vendor, VendorAttr } from './attributes.js';
import { HEADER_LENGTH } from './codec.js';
import { RadiusErrors } from './errors.js';
import type { PacketWriter } from './packet-writer.js';
import type { RadiusDictionary } from './radius-dictionary.js';

const TWO_32 = 0x1_0000_0000;

interface Vsa { vendorId: number; code: number }

/**
 * Encodes the engine's decision as Access-Accept or Access-Reject.
 *
 * The vendor attributes are resolved from the dictionaries once, in the
 * constructor (a missing or mistyped one fails start-up); `encode` only
 * writes numbers. Every reply starts with Message-Authenticator, whether or
 * not the request carried one (Blast-RADIUS, CVE-2024-3596).
 *
 * One Accept speaks to every NAS family we support at once: WISPr (bit/s),
 * ChilliSpot/CoovaChilli (kbit/s, octet quota) and MikroTik (rate string,
 * byte quota). A NAS ignores vendors it does not know (RFC 2865 §5.26).
 */
export class AccessReplyEncoder {
  private readonly wisprUp: Vsa;
  private readonly wisprDown: Vsa;
  private readonly chilliUp: Vsa;
  private readonly chilliDown: Vsa;
  private readonly chilliTotal: Vsa;
  private readonly chilliTotalGiga: Vsa;
  private readonly mikrotikRate: Vsa;
  private readonly mikrotikTotal: Vsa;
  private readonly mikrotikTotalGiga: Vsa;

  constructor(dict: RadiusDictionary) {
    const vsa = (vendor: string, name: string, type: 'integer' | 'string'): Vsa => {
      const a = dict.attribute(name);
      const vendorId = dict.vendorId(vendor);
      if (a.vendorId !== vendorId) throw RadiusErrors.RADIUS_DICTIONARY(name, `expected an attribute of vendor ${vendor}`);
      if (a.type !== type) throw RadiusErrors.RADIUS_DICTIONARY(name, `expected type ${type}, the dictionary says ${a.type}`);
      return { vendorId, code: a.code };
    };
    this.wisprUp = vsa(Vendor.WISPR, VendorAttr.WISPR_BANDWIDTH_MAX_UP, 'integer');
    this.wisprDown = vsa(Vendor.WISPR, VendorAttr.WISPR_BANDWIDTH_MAX_DOWN, 'integer');
    this.chilliUp = vsa(Vendor.CHILLISPOT, VendorAttr.CHILLISPOT_BANDWIDTH_MAX_UP, 'integer');
    this.chilliDown = vsa(Vendor.CHILLISPOT, VendorAttr.CHILLISPOT_BANDWIDTH_MAX_DOWN, 'integer');
    this.chilliTotal = vsa(Vendor.CHILLISPOT, VendorAttr.CHILLISPOT_MAX_TOTAL_OCTETS, 'integer');
    this.chilliTotalGiga = vsa(Vendor.CHILLISPOT, VendorAttr.CHILLISPOT_MAX_TOTAL_GIGAWORDS, 'integer');
    this.mikrotikRate = vsa(Vendor.MIKROTIK, VendorAttr.MIKROTIK_RATE_LIMIT, 'string');
    this.mikrotikTotal = vsa(Vendor.MIKROTIK, VendorAttr.MIKROTIK_TOTAL_LIMIT, 'integer');
    this.mikrotikTotalGiga = vsa(Vendor.MIKROTIK, VendorAttr.MIKROTIK_TOTAL_LIMIT_GIGAWORDS, 'integer');
  }

  /**
   * The reply to the Access-Request `request` of length `len` (checked by
   * checkFraming): its Identifier and Request Authenticator are used and its
   * Proxy-State attributes echoed.
   */
  encode(w: PacketWriter, request: Buffer, len: number, decision: AccessDecision, secret: string): Buffer {
    const requestAuthenticator = request.subarray(4, HEADER_LENGTH);
    if (!decision.accept) {
      w.begin(Code.ACCESS_REJECT, request[1]!).messageAuthenticator();
      if (decision.reason) w.string(Attr.REPLY_MESSAGE, decision.reason);
      w.copyAttributes(request, len, Attr.PROXY_STATE);
      return w.finishReply(requestAuthenticator, secret);
    }
    // A NaN here would silently drop Session-Timeout, i.e. grant an endless
    // session: refuse to encode instead (the server then sends nothing).
    const { sessionTimeout, idleTimeout, downKbps, upKbps } = decision;
    if (!Number.isFinite(sessionTimeout) || !Number.isFinite(idleTimeout) || !Number.isFinite(downKbps) || !Number.isFinite(upKbps)) {
      throw RadiusErrors.RADIUS_BAD_VALUE(`decision for ${decision.sessionId} has a non-finite limit`);
    }
    w.begin(Code.ACCESS_ACCEPT, request[1]!).messageAuthenticator();
    // Session-Timeout always goes out, at least 1 s: without it, or at 0,
    // several NASes (CoovaChilli among them) set no limit at all.
    w.uint32(Attr.SESSION_TIMEOUT, Math.max(1, sessionTimeout));
    if (decision.idleTimeout > 0) w.uint32(Attr.IDLE_TIMEOUT, decision.idleTimeout);
    w.string(Attr.CLASS, decision.sessionId);
    const up = decision.upKbps > 0 ? decision.upKbps : 0;
    const down = decision.downKbps > 0 ? decision.downKbps : 0;
    if (down) {
      w.vendorUint32(this.wisprDown.vendorId, this.wisprDown.code, down * 1000);
      w.vendorUint32(this.chilliDown.vendorId, this.chilliDown.code, down);
    }
    if (up) {
      w.vendorUint32(this.wisprUp.vendorId, this.wisprUp.code, up * 1000);
      w.vendorUint32(this.chilliUp.vendorId, this.chilliUp.code, up);
    }
    // MikroTik reads "rx/tx" from the router's side: rx is what the guest sends (up).
    if (up || down) w.vendorString(this.mikrotikRate.vendorId, this.mikrotikRate.code, `${Math.floor(up)}k/${Math.floor(down)}k`);
    if (decision.quotaBytes !== null) {
      // A limit of 0 means "no limit" to CoovaChilli and RouterOS: an exhausted
      // quota must not become an unlimited one, so send at least 1 octet.
      const quota = Math.max(1, Math.floor(decision.quotaBytes));
      const low = quota % TWO_32;
      const high = Math.floor(quota / TWO_32);
      w.vendorUint32(this.chilliTotal.vendorId, this.chilliTotal.code, low);
      if (high) w.vendorUint32(this.chilliTotalGiga.vendorId, this.chilliTotalGiga.code, high);
      w.vendorUint32(this.mikrotikTotal.vendorId, this.mikrotikTotal.code, low);
      if (high) w.vendorUint32(this.mikrotikTotalGiga.vendorId, this.mikrotikTotalGiga.code, high);
    }
    w.copyAttributes(request, len, Attr.PROXY_STATE);
    return w.finishReply(requestAuthenticator, secret);
  }
}
