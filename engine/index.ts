/**
 * The engine's public surface: `http/`, `radius/` and `scripts/` import from
 * here and nowhere else inside engine/ (checked by scripts/check-boundaries).
 */
export { Engine, type EngineOptions } from './engine.js';
export { loadConfig, ConfigError, type Config, type Cidr } from './config.js';
export { createLogger, inRequest, type Logger } from './logger.js';
export { AppError, Errors } from './errors.js';
export { normalizeMac } from './ids.js';
export type { Principal, PresentedCredentials } from './tenants/credentials.js';
export { signOperatorToken, signPlatformToken, PLATFORM_ADMIN, IDENTITY_READER_ROLES, readsIdentities, type PlatformPrincipal } from './tenants/credentials.js';
export { MODULES, DEFAULT_MODULES, DASHBOARD_MODULES, type Tenant } from './tenants/tenant-service.js';
export type { Hotspot, HotspotInput, NasClient, NasClientInput } from './hotspots/hotspot-service.js';
export { DEFAULT_PROFILES, type BandwidthProfile } from './vouchers/bandwidth-profiles.js';
export {
  DEFAULT_CODE_FORMAT, MIN_CODE_BITS, chosenCodeStrength, codeFormat, codeStrength, type CodeFormat, type CodeStrength,
} from './vouchers/code-generator.js';
export { MAX_BATCH, type VoucherSpec, type Page } from './vouchers/voucher-service.js';
export { VOUCHER_CSV_HEADER, type ExportSelection } from './vouchers/voucher-export.js';
export { STATUS_FILTERS, checkWindow, toPublic, toConsole, type StatusFilter, type PublicVoucher, type ConsoleVoucher } from './vouchers/voucher.js';
export { VoucherImport, MAX_LISTED_INVALID, type ImportReport, type ImportOptions } from './vouchers/voucher-import.js';
export { CSV_HEADER, NOTES_MAX, type ImportReason } from './vouchers/voucher-csv.js';
export type { Authorized, VerifyRequest } from './signin/voucher-method.js';
export type { SignInService } from './signin/sign-in-service.js';
export type { Started, CheckedIdentity, PreCheckedMethod, TermsSource } from './signin/identity-method.js';
export type { DecisionSink, SignInDecision } from './signin/decision-sink.js';
export type { AuthMethod } from './redis/records.js';
export { assetPath, projectPath, projectRoot } from './util/project-root.js';
export { createPool, isPostgresUnreachable, migrate, migrationStatus, type MigrationState } from './store/postgres.js';
export type {
  NasRecord, AccessRequestMsg, ChapResponse, AccessDecision, AcctStatus, StopReason, AccountingMsg,
  NasCommandResult, NasSessionRef, NasControl, RadiusHandler, MirroredAnswers,
} from './sessions/ports.js';
export { internalSessionId, publicSessionId, maskUsername, type PublicSession } from './sessions/session-service.js';
export type { BlockDuration, BlockEntry } from './sessions/block-service.js';
export { macAuthDevice, type RadiusGateway } from './nas/radius-gateway.js';
export { portOf } from './nas/nas-presence.js';
export { NAS_REPLY_PROFILES, NAS_TYPES, type NasType, type NasReplyOptions, type ReplyItem, type ReplySource } from './hotspots/nas-profiles.js';
export { TimerWheel } from './sessions/timer-wheel.js';
export { localDay } from './util/local-day.js';
export { MirrorView, MIRROR_HITS_HELP, MIRROR_HITS_METRIC, threadIndex, type MirrorShare } from './sessions/mirror-view.js';
export type { MirrorSource } from './sessions/actor-ports.js';
export { GENESIS, canonical, link, ChainVerifier, type ChainFields, type StoredLink, type ChainBreak } from './audit/chain.js';
export { runRetention, retentionCutoff, RETENTION_DAYS, RETENTION_LOCK_ID } from './audit/retention.js';
export type { OperatorEvent, PendingChange, ChangeIntent } from './audit/audit-log.js';
export { INTENT_REFRESH_MS } from './audit/audit-log.js';
export type { ChainRecord, VerifyResult } from './audit/audit-service.js';
export { EvidencePackService, type EvidencePackDownload } from './compliance/evidence-pack-service.js';
export { MAX_SHEET_IDS, MAX_SHEET_MESSAGE, MAX_SHEET_VOUCHERS, VoucherSheetService, type SheetDownload, type SheetRequest } from './vouchers/voucher-sheet-service.js';
export { SHEET_LAYOUTS, type SheetLayout } from './vouchers/voucher-sheet-draw.js';
export { SHEET_LANGS, type SheetLang } from './vouchers/voucher-sheet-text.js';
export { PACK_FORMAT, MAX_PACK_DAYS, type Manifest } from './compliance/evidence-pack.js';
export type { DaySummary } from './compliance/daily-summary.js';
// OTP sign-in (engine/signin/otp/) and tenant sign-in settings
export type { VerifiedIdentity, SessionStarter, OtpDecision, OtpDecisionSink } from './signin/otp/types.js';
export type { OtpRequestInput, OtpVerifyInput, OtpSent, OtpAuthorized } from './signin/otp/otp-service.js';
export { AUTH_METHODS, ENV_REF, DEFAULT_OTP_LIMITS, DEFAULT_GUESSING_LIMITS, DEFAULT_SPONSOR, type SponsorSettings, type SignInSettings, type SignInSettingsInput, type GuessingLimits } from './signin/sign-in-settings.js';
// OTP providers (engine/signin/providers)
export type {
  OtpChannelName, OtpMessage, SendResult, OtpSender, OtpSenders, DeliveryReceiver, SignInConfigSource, SmsConfig, EmailConfig,
} from './signin/providers/types.js';
export type { MsgappProvider, MsgappProviderInput, MsgappType } from './signin/providers/msgapp-provider.js';
export { DELIVERY_PROVIDERS, type DeliveryProvider } from './signin/providers/delivery-callbacks.js';
export { checkSmsConfig, checkEmailConfig, ProviderRegistry } from './signin/providers/provider-registry.js';
// Portal page and gateway hand-back
export { PORTAL_METHODS, GATEWAY_KINDS, MAX_LOGO_CHARS, offeredMethods, type PortalMethod, type PortalSettings, type PortalSettingsInput } from './hotspots/portal-settings.js';
export { PortalState, PORTAL_OUTCOME_TTL_SEC, type PortalRecord, type PortalOutcome, type CaptiveState } from './signin/portal-state.js';
export { PortalSignIn, type PortalSignInRequest, type PortalSignInResult, type PortalStarted, type PortalAnswer } from './signin/portal-sign-in.js';
export { UamCredentials, type UamCredentialRecord } from './signin/uam-credential.js';
export { parseGatewayParams, gatewayQuery, gatewayFrom, unpackOpenNdsQuery, type GatewayParams } from './signin/gateway-params.js';
export { buildHandback, handbackUrl, chapResponse, papPassword, openNdsToken, type Handback } from './signin/handback.js';
export type { HotspotRef } from './hotspots/hotspot-service.js';
// Dashboard operations (engine/incidents/, engine/posture/, engine/views/): incidents, posture, switches and topology, audit paging, JIT approvals
export { INCIDENT_STATES, INCIDENT_KINDS, INCIDENT_SEVERITIES, type Incident, type IncidentState, type IncidentKind, type IncidentFilter } from './incidents/incident-service.js';
export { POSTURE_VERDICTS, type PostureVerdict, type PostureInput, type PostureReceived } from './posture/posture-service.js';
export type { Switch, SwitchPort, Topology } from './views/network-view.js';
export type { AuditEntry } from './views/audit-pages.js';
export type { JitApproval } from './views/jit-approvals.js';
// Dashboard read models (engine/views/)
export type { Overview, KpisExtra, IncidentCounts } from './views/overview.js';
export type { LivePanel } from './views/live-panel.js';
export { LIVE_PAGE_DEFAULT, LIVE_PAGE_MAX, LIVE_OFFSET_MAX, type ConsoleSession, type LiveSessionPage } from './views/live-session-list.js';
export type { SiteSummary, SiteMetrics, SiteHealth } from './views/sites.js';
// Streams: the event fan-out and the dashboard's invalidation streams (engine/events/), stream tokens
export { STREAM_NAMES, STREAM_KINDS, type StreamName, type Invalidation, type InvalidationListener, type InvalidationStreams } from './events/invalidation-streams.js';
export { signStreamToken, STREAM_TOKEN_TTL_SEC } from './tenants/credentials.js';
export type { StreamSettings } from './config.js';
export type { SponsorLinkView, SponsorRequestRow, SponsorStatus } from './signin/sponsor/sponsor-service.js';
// Webhooks (engine/webhooks/)
export { WEBHOOK_EVENTS, type Webhook, type WebhookEvent, type WebhookInput } from './webhooks/webhook-store.js';
export { ATTEMPT_STATUSES, type AttemptStatus, type DeliveryAttempt } from './webhooks/webhook-deliveries.js';
// Room sign-in over a PMS link (engine/pms/)
export type { PmsLinkView, RoomVerifyRequest } from './pms/pms-service.js';
export type { PmsLinkInput } from './pms/pms-link-store.js';
export { DEFAULT_RESYNC_AFTER_GAP_SEC } from './pms/pms-link-store.js';
// Personal data (engine/privacy/)
export type { PrivacyRequest, RequestType, RequestOutcome } from './privacy/privacy-request-store.js';
export { releasedMac, holdEnd, personalDataRetention } from './privacy/legal-holds.js';

// Reports (engine/reports/): device types, rollups, the session report and analytics
export { DEVICE_TYPES, deviceType, type DeviceType, type DeviceHints } from './reports/device-type.js';
export { ReportService, REPORT_AUTH_METHODS, REPORT_DEVICE_TYPES, type Analytics, type ReportQuery } from './reports/report-service.js';
export { REPORT_MAX_DAYS, reportRange, type ReportRange } from './reports/report-range.js';
export type { SessionReportRow } from './reports/session-rows.js';
export { ConsoleReportService, type ConsoleReport, type ConsoleReportQuery } from './reports/console-report.js';
export { MULTI_VENUE_MODULE, REPORT_MAX_VENUES } from './reports/report-venues.js';
export { REPORT_PRESETS, presetRange, type ReportPreset } from './reports/report-presets.js';
export { ReportPdfService, type ReportPdfDownload, type ReportPdfRequest } from './reports/report-pdf-service.js';
export { REPORT_PDF_LANGS, type ReportPdfLang } from './reports/report-pdf-text.js';
// Scheduled report e-mail (engine/schedules/)
export { FREQUENCIES, CATCH_UP_MAX, type Frequency } from './schedules/schedule-periods.js';
export { SCHEDULE_CONTENTS, SCHEDULE_LANGS, MAX_RECIPIENTS, type ReportSchedule, type ScheduleRun, type ScheduleInput, type RunStatus } from './schedules/schedule-store.js';
export { hourOf } from './events/activity-keys.js';
export { labelValues, Metrics, type MetricsSnapshot } from './metrics.js';
// RADIUS threads (radius/radius-threads.ts): each keeps a copy of the NAS registry, in a supervised worker
export { NasRegistry, type NasRow } from './nas/nas-registry.js';
export { WorkerSupervisor } from './workers/worker-supervisor.js';
