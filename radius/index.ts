/**
 * The RADIUS layer's public surface for the wiring (scripts/) and tools
 * (bench/). It reaches the engine only through engine/index.ts.
 */
export { RadiusServer } from './radius-server.js';
export { RADSEC_SECRET, type RadiusServerOptions, type RadiusServerStats } from './radius-server-options.js';
export { RadiusThreads, type RadiusThreadsOptions } from './radius-threads.js';
export { RadsecListener, certificateNames, type RadsecListenerOptions } from './radsec-listener.js';
export { CoaClient, type CoaClientOptions, type CoaClientStats } from './coa-client.js';
export { RadiusDictionary, DEFAULT_DICTIONARY, type DictAttribute } from './radius-dictionary.js';
export type { RadiusMetrics } from './radius-metrics.js';
export { MetricName } from './radius-metrics.js';
export { RadiusErrors, DropReason } from './errors.js';
export { Code, Attr, AcctStatusType, ErrorCause, TERMINATE_CAUSES, Vendor, VendorAttr } from './attributes.js';
export { AccessReplyEncoder } from './access-reply-encoder.js';
export { PacketWriter } from './packet-writer.js';
export { RadiusCrypto } from './radius-crypto.js';
export { Md5, HmacMd5Key } from './md5.js';
export {
  checkFraming, findAttribute, findVendorAttribute, readString, readUint32, readIPv4,
  decodePacket, attributeValue, vendorAttributeValues,
  HEADER_LENGTH, MAX_PACKET_LENGTH, AUTHENTICATOR_LENGTH,
  type RadiusPacket, type RadiusAttribute,
} from './codec.js';
