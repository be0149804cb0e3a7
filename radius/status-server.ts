import { Attr, Code } from './attributes.js';
import { HEADER_LENGTH, findAttribute } from './codec.js';
import { DropReason } from './errors.js';
import type { PacketWriter } from './packet-writer.js';
import type { RadiusCrypto } from './radius-crypto.js';

/**
 * The answer to a Status-Server (RFC 5997), the NAS's or a monitor's "are
 * you alive", or why it is dropped. It must carry a Message-Authenticator
 * made with the NAS's secret (§3: one without is discarded, whatever the NAS
 * record says), and is answered at once, from this process, with an
 * Access-Accept on the auth port or an Accounting-Response on the accounting
 * port, each with a Message-Authenticator and nothing else. Not cached as a
 * duplicate (§3: a client sends each with a fresh Identifier and
 * authenticator) and not handed to the engine: it says the server answers,
 * not that a guest may in.
 */
export function statusReply(
  crypto: RadiusCrypto, writer: PacketWriter, msg: Buffer, len: number, secret: string, port: 'auth' | 'acct',
): Buffer | DropReason {
  const ma = findAttribute(msg, len, Attr.MESSAGE_AUTHENTICATOR);
  if (ma < 0) return DropReason.MISSING_MESSAGE_AUTHENTICATOR;
  if (!crypto.verifyMessageAuthenticator(msg, len, ma, secret, null)) return DropReason.BAD_MESSAGE_AUTHENTICATOR;
  return writer.begin(port === 'auth' ? Code.ACCESS_ACCEPT : Code.ACCOUNTING_RESPONSE, msg[1]!)
    .messageAuthenticator()
    .finishReply(msg.subarray(4, HEADER_LENGTH), secret);
}
