/**
 * Just enough ASN.1 for RFC 3161: DER writers for the few types a
 * TimeStampReq holds, and a reader that walks a TimeStampResp. The reader
 * also takes BER's indefinite lengths and constructed OCTET STRINGs, which
 * some CMS producers still emit. It checks structure, never signatures:
 * that is the verifier's job (`openssl ts -verify`) with its trust anchors.
 */

export const TAG = {
  BOOLEAN: 0x01, INTEGER: 0x02, BIT_STRING: 0x03, OCTET_STRING: 0x04, NULL: 0x05, OID: 0x06,
  UTF8_STRING: 0x0c, GENERALIZED_TIME: 0x18, SEQUENCE: 0x30, SET: 0x31,
  /** [0] constructed, context-specific (EXPLICIT wrappers in CMS). */
  CTX0: 0xa0,
} as const;

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One TLV with the given tag and content. */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(TAG.SEQUENCE, Buffer.concat(items));
export const octets = (b: Buffer): Buffer => tlv(TAG.OCTET_STRING, b);
export const nullValue = (): Buffer => Buffer.from([TAG.NULL, 0]);
export const bool = (v: boolean): Buffer => Buffer.from([TAG.BOOLEAN, 1, v ? 0xff : 0]);

/** A non-negative INTEGER from its big-endian magnitude, minimally encoded (X.690 §8.3.2). */
export function uint(magnitude: Buffer): Buffer {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  let body = magnitude.subarray(i);
  if (body.length === 0) body = Buffer.from([0]);
  if (body[0]! & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
  return tlv(TAG.INTEGER, body);
}

export function smallInt(n: number): Buffer {
  return uint(Buffer.from([n]));
}

/** An OBJECT IDENTIFIER from dotted form (X.690 §8.19). */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const [a = 0, b = 0, ...rest] = arcs;
  const out: number[] = [];
  for (const arc of [a * 40 + b, ...rest]) {
    const groups: number[] = [];
    let v = arc;
    do {
      groups.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < groups.length - 1; i++) groups[i]! |= 0x80;
    out.push(...groups);
  }
  return tlv(TAG.OID, Buffer.from(out));
}

/** The dotted form of an OID's content bytes. */
export function oidToString(content: Buffer): string {
  const arcs: number[] = [];
  let v = 0;
  for (const byte of content) {
    v = v * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      if (arcs.length === 0) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else arcs.push(v);
      v = 0;
    }
  }
  return arcs.join('.');
}

export class DerError extends Error {}

/** One parsed element: its tag, and where its content lies in the buffer it was read from. */
export interface Node {
  tag: number;
  /** The content (for an indefinite length: between the header and the end-of-contents octets). */
  content: Buffer;
  /** Offset just past the whole element, end-of-contents octets included. */
  next: number;
}

/** Reads the element starting at `at`. */
export function read(buf: Buffer, at = 0): Node {
  if (at + 2 > buf.length) throw new DerError('truncated element');
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not used by RFC 3161');
  let pos = at + 1;
  const first = buf[pos++]!;
  if (first === 0x80) {
    if (!(tag & 0x20)) throw new DerError('indefinite length on a primitive element');
    // BER indefinite length: children until the end-of-contents octets 00 00.
    let p = pos;
    while (!(buf[p] === 0 && buf[p + 1] === 0)) {
      if (p >= buf.length) throw new DerError('unterminated indefinite length');
      p = read(buf, p).next;
    }
    return { tag, content: buf.subarray(pos, p), next: p + 2 };
  }
  let len = first;
  if (first & 0x80) {
    const n = first & 0x7f;
    if (n > 4 || pos + n > buf.length) throw new DerError('bad length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[pos++]!;
  }
  if (pos + len > buf.length) throw new DerError('element runs past the end');
  return { tag, content: buf.subarray(pos, pos + len), next: pos + len };
}

/** The children of a constructed element. */
export function children(node: Node): Node[] {
  const out: Node[] = [];
  for (let p = 0; p < node.content.length;) {
    const c = read(node.content, p);
    out.push(c);
    p = c.next;
  }
  return out;
}

/** The child at `index`, which must carry `tag`. */
export function child(node: Node, index: number, tag: number, what: string): Node {
  const c = children(node)[index];
  if (!c || c.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)} at position ${index}`);
  return c;
}

/** An OCTET STRING's bytes, joining the fragments of a BER constructed one (tag 0x24). */
export function octetValue(node: Node): Buffer {
  if (node.tag === TAG.OCTET_STRING) return node.content;
  if (node.tag === (TAG.OCTET_STRING | 0x20)) return Buffer.concat(children(node).map(octetValue));
  throw new DerError('expected an OCTET STRING');
}

/** A small INTEGER's value (PKIStatus, versions). */
export function intValue(node: Node): number {
  if (node.tag !== TAG.INTEGER || node.content.length === 0 || node.content.length > 6) throw new DerError('expected a small INTEGER');
  return node.content.readIntBE(0, node.content.length);
}
