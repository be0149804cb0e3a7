/**
 * The engine's public surface: `http/`, `radius/` and `scripts/` import from
 * here and nowhere else inside engine/ (checked by scripts/check-boundaries).
 */
export { Engine, type EngineOptions } from './engine.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export { createLogger, type Logger } from './logger.js';
export { AppError, Errors } from './errors.js';
export { normalizeMac } from './ids.js';
export type { Principal, PresentedCredentials } from './tenants/credentials.js';
export { signOperatorToken } from './tenants/credentials.js';
export { MODULES, DEFAULT_MODULES, type Tenant } from './tenants/tenant-service.js';
export type { Hotspot, HotspotInput, NasClient, NasClientInput } from './hotspots/hotspot-service.js';
export { DEFAULT_PROFILES, type BandwidthProfile } from './vouchers/bandwidth-profiles.js';
export { DEFAULT_CODE_FORMAT, type CodeFormat } from './vouchers/code-generator.js';
export { MAX_BATCH, toPublic, toConsole, type VoucherSpec, type PublicVoucher, type ConsoleVoucher, type Page } from './vouchers/voucher-service.js';
export { STATUS_FILTERS, type StatusFilter } from './vouchers/voucher.js';
export type { Authorized, VerifyRequest } from './vouchers/voucher-redemption.js';
export { projectPath, projectRoot } from './util/project-root.js';
export type {
  NasRecord, AccessRequestMsg, AccessDecision, AcctStatus, AccountingMsg,
  NasCommandResult, NasSessionRef, NasControl, RadiusHandler,
} from './sessions/ports.js';
export { internalSessionId, publicSessionId, maskUsername, type BlockDuration, type PublicSession } from './sessions/session-service.js';
export type { RadiusGateway } from './sessions/radius-gateway.js';
export { TimerWheel } from './sessions/timer-wheel.js';
export { localDay } from './sessions/hotspot-actor.js';
export { threadIndex } from './sessions/actor-pool.js';
export { GENESIS, canonical, link, ChainVerifier, type ChainFields, type StoredLink, type ChainBreak } from './audit/chain.js';
export { runRetention, retentionCutoff, RETENTION_DAYS } from './audit/retention.js';
export type { OperatorEvent } from './audit/audit-log.js';
export type { ChainRecord, VerifyResult } from './audit/audit-service.js';
export { EvidencePackService, type EvidencePackDownload } from './compliance/evidence-pack-service.js';
export { PACK_FORMAT, MAX_PACK_DAYS, type Manifest } from './compliance/evidence-pack.js';
export type { DaySummary } from './compliance/daily-summary.js';
// Portal page and gateway hand-back (helper I)
export { PORTAL_METHODS, GATEWAY_KINDS, MAX_LOGO_CHARS, type PortalMethod, type PortalSettings, type PortalSettingsInput } from './signin/portal-settings.js';
export { PortalState, PORTAL_OUTCOME_TTL_SEC, type PortalRecord, type PortalOutcome, type CaptiveState } from './signin/portal-state.js';
export { UamCredentials, type UamCredentialRecord } from './signin/uam-credential.js';
export { parseGatewayParams, gatewayQuery, gatewayFrom, type GatewayParams } from './signin/gateway-params.js';
export { buildHandback, handbackUrl, chapResponse, papPassword, openNdsToken, type Handback } from './signin/handback.js';
export type { HotspotRef } from './hotspots/hotspot-service.js';
