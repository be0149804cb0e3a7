import { randomBytes } from 'node:crypto';
import { Errors } from '../errors.js';
import {
  DerError, TAG, bool, child, children, intValue, nullValue, octetValue, octets, oid, oidToString, read, seq, smallInt, uint, type Node,
} from './der.js';

/** id-sha256 (RFC 5754 §2). */
export const SHA256_OID = '2.16.840.1.101.3.4.2.1';
/** id-signedData (RFC 5652 §5.1) and id-ct-TSTInfo (RFC 3161 §2.4.2). */
const SIGNED_DATA_OID = '1.2.840.113549.1.7.2';
const TST_INFO_OID = '1.2.840.113549.1.9.16.1.4';
/** A token is a few KB (signature and the TSA's certificate chain); anything far larger is not one. */
const MAX_RESPONSE_BYTES = 256 * 1024;
const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * RFC 3161 §2.4.1 TimeStampReq for a SHA-256 digest:
 *   SEQUENCE { version 1, messageImprint { {id-sha256, NULL}, digest }, nonce, certReq TRUE }
 * No reqPolicy: the TSA's default policy. The algorithm parameters are an explicit
 * NULL as `openssl ts -query` writes them (RFC 5754 §2 makes receivers accept both forms).
 * certReq asks for the TSA's certificate inside the token, so a verifier needs only the CA.
 */
export function timeStampRequest(sha256: Buffer, nonce: Buffer | null): Buffer {
  if (sha256.length !== 32) throw new Error(`timeStampRequest: a SHA-256 digest is 32 bytes, got ${sha256.length}`);
  return seq(
    smallInt(1),
    seq(seq(oid(SHA256_OID), nullValue()), octets(sha256)),
    ...(nonce ? [uint(nonce)] : []),
    bool(true),
  );
}

/** What the token says, as far as a client must check it (the signature is the verifier's job). */
export interface TstInfo {
  policy: string;
  hashOid: string;
  imprint: Buffer;
  serial: string;
  /** ISO 8601 UTC. */
  genTime: string;
  /** The nonce's INTEGER content bytes, when the token has one. */
  nonce: Buffer | null;
}

export interface TimeStampResponse {
  /** PKIStatus: 0 granted, 1 grantedWithMods, 2 rejection, 3 waiting, 4 revocationWarning, 5 revocationNotification. */
  status: number;
  statusText: string;
  token: TstInfo | null;
}

/** Reads a TimeStampResp (RFC 3161 §2.4.2) down to the TSTInfo inside its SignedData. Throws DerError on a malformed one. */
export function readTimeStampResponse(tsr: Buffer): TimeStampResponse {
  const resp = read(tsr);
  if (resp.tag !== TAG.SEQUENCE || resp.next !== tsr.length) throw new DerError('TimeStampResp is not one SEQUENCE');
  const [statusInfo, tokenNode] = children(resp);
  if (!statusInfo || statusInfo.tag !== TAG.SEQUENCE) throw new DerError('PKIStatusInfo missing');
  const parts = children(statusInfo);
  const status = intValue(child(statusInfo, 0, TAG.INTEGER, 'PKIStatus'));
  const text = parts.find((p) => p.tag === TAG.SEQUENCE);
  const statusText = text ? children(text).filter((t) => t.tag === TAG.UTF8_STRING).map((t) => t.content.toString('utf8')).join('; ') : '';
  return { status, statusText, token: tokenNode ? readToken(tokenNode) : null };
}

function readToken(contentInfo: Node): TstInfo {
  if (oidToString(child(contentInfo, 0, TAG.OID, 'ContentInfo').content) !== SIGNED_DATA_OID) throw new DerError('token is not SignedData');
  const signedData = child(child(contentInfo, 1, TAG.CTX0, 'ContentInfo content'), 0, TAG.SEQUENCE, 'SignedData');
  const encap = child(signedData, 2, TAG.SEQUENCE, 'EncapsulatedContentInfo');
  if (oidToString(child(encap, 0, TAG.OID, 'eContentType').content) !== TST_INFO_OID) throw new DerError('token does not carry a TSTInfo');
  const eContent = children(child(encap, 1, TAG.CTX0, 'eContent'))[0];
  if (!eContent) throw new DerError('eContent missing');
  const der = octetValue(eContent);
  const tst = read(der);
  if (tst.tag !== TAG.SEQUENCE) throw new DerError('TSTInfo is not a SEQUENCE');
  const imprint = child(tst, 2, TAG.SEQUENCE, 'messageImprint');
  const rest = children(tst).slice(5);
  // After genTime: accuracy SEQUENCE and ordering BOOLEAN, both optional, then the nonce INTEGER.
  const nonce = rest.find((n) => n.tag === TAG.INTEGER) ?? null;
  return {
    policy: oidToString(child(tst, 1, TAG.OID, 'policy').content),
    hashOid: oidToString(child(child(imprint, 0, TAG.SEQUENCE, 'hashAlgorithm'), 0, TAG.OID, 'hash OID').content),
    imprint: child(imprint, 1, TAG.OCTET_STRING, 'hashedMessage').content,
    serial: child(tst, 3, TAG.INTEGER, 'serialNumber').content.toString('hex'),
    genTime: generalizedTime(child(tst, 4, TAG.GENERALIZED_TIME, 'genTime').content.toString('latin1')),
    nonce: nonce ? nonce.content : null,
  };
}

/** `YYYYMMDDHHMMSS[.f+]Z` (RFC 3161 §2.4.2 requires UTC) as ISO 8601. */
function generalizedTime(s: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:[.,](\d+))?Z$/.exec(s);
  if (!m) throw new DerError(`genTime ${JSON.stringify(s)} is not a UTC GeneralizedTime`);
  const ms = (m[7] ?? '').padEnd(3, '0').slice(0, 3);
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${ms}Z`;
}

function sameInteger(a: Buffer, b: Buffer): boolean {
  const value = (x: Buffer): bigint => (x.length === 0 ? -1n : BigInt('0x' + x.toString('hex')));
  return value(a) === value(b);
}

/** A granted token: the TimeStampResp bytes as the TSA sent them (the `.tsr` file) and what it says. */
export interface TsaToken {
  tsr: Buffer;
  genTime: string;
  serial: string;
}

/**
 * An RFC 3161 client over HTTP (RFC 3161 §3.4): POSTs a TimeStampReq as
 * application/timestamp-query and keeps the TimeStampResp when it grants a
 * token for exactly our digest and nonce. Failures throw AppErrors
 * (TSA_UNREACHABLE, TSA_REJECTED, TSA_BAD_RESPONSE).
 */
export class TsaClient {
  constructor(readonly url: string, private readonly timeoutMs = DEFAULT_TIMEOUT_MS) {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`TsaClient: ${url} is not an http(s) URL`);
  }

  async stamp(sha256: Buffer): Promise<TsaToken> {
    // 63 random bits: positive and unpredictable, so a replayed or cached answer is caught.
    const nonce = randomBytes(8);
    nonce[0]! &= 0x7f;
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
        body: new Uint8Array(timeStampRequest(sha256, nonce)),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw Errors.TSA_UNREACHABLE(describe(err));
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw Errors.TSA_BAD_RESPONSE(`HTTP ${res.status}`);
    }
    let tsr: Buffer;
    try {
      tsr = await readCapped(res, MAX_RESPONSE_BYTES);
    } catch (err) {
      throw Errors.TSA_UNREACHABLE(describe(err));
    }
    let parsed: TimeStampResponse;
    try {
      parsed = readTimeStampResponse(tsr);
    } catch (err) {
      throw Errors.TSA_BAD_RESPONSE((err as Error).message);
    }
    if (parsed.status !== 0 && parsed.status !== 1) throw Errors.TSA_REJECTED(parsed.status, parsed.statusText);
    const t = parsed.token;
    if (!t) throw Errors.TSA_BAD_RESPONSE('status granted but no token');
    if (t.hashOid !== SHA256_OID || !t.imprint.equals(sha256)) throw Errors.TSA_BAD_RESPONSE('the token is for another digest');
    if (!t.nonce || !sameInteger(t.nonce, nonce)) throw Errors.TSA_BAD_RESPONSE('the token does not carry our nonce');
    return { tsr, genTime: t.genTime, serial: t.serial };
  }
}

function describe(err: unknown): string {
  const e = err as Error & { cause?: Error };
  return e.cause?.message ? `${e.message}: ${e.cause.message}` : e.message;
}

async function readCapped(res: Response, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (!res.body) return Buffer.alloc(0);
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    // Leaving the loop by a throw cancels the body.
    if (size > cap) throw new Error(`response larger than ${cap} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks, size);
}
