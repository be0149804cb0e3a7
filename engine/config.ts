import { isIP } from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import { cidrList, dictionaryDir, metricsToken, pmsSettings, privateTargets, radsecSettings, secretsKeys, tlsFiles, type Cidr, type PmsTimers, type RadsecConfig } from './config-parsers.js';
import type { SecretKey } from './secrets/secret-box.js';
import { deriveOtpKey } from './signin/otp/otp-code.js';
import { isClusterUrl, parseClusterUrl } from './redis/redis-client.js';

export { cidrList, type Cidr, type RadsecConfig };

/**
 * Configuration from the environment, validated once at start. Every bad value
 * is reported, each with its own line, and the service refuses to start.
 */
export interface Config {
  httpHost: string;
  httpPort: number;
  /** Optional separate ports per surface; a surface with its own port leaves the main listener. */
  portalPort: number | undefined;
  consolePort: number | undefined;
  dashboardPort: number | undefined;
  redisUrl: string;
  databaseUrl: string;
  /** DATABASE_REPLICA_URL: a read replica the reports read from (lagging by its replication delay); absent: the primary. */
  databaseReplicaUrl: string | undefined;
  jwtSecret: Uint8Array;
  /** Leeway for `exp`/`iat`/`nbf` in JWTs, seconds. */
  jwtLeewaySec: number;
  bodyLimitBytes: number;
  /** Largest CSV file POST /v1/vouchers/import takes (streamed; 413 beyond). */
  voucherImportMaxBytes: number;
  logLevel: string;
  /** Session length when neither the voucher nor the hotspot sets one. */
  defaultSessionMinutes: number;
  /** Idle time-out sent to the NAS and enforced as a fallback; 0: none. */
  defaultIdleTimeoutSec: number;
  /** Worker threads for hotspot actors. */
  actorThreads: number;
  /** HOTSPOT_LEASE_MS: how long a hotspot's lease outlives its process's last renewal (renewed every third of it); what a kill -9 costs its hotspots. */
  hotspotLeaseMs: number;
  radiusHost: string;
  radiusAuthPort: number;
  radiusAcctPort: number;
  /** Start the RADIUS server (off for processes that only serve HTTP). */
  radiusEnabled: boolean;
  /** RADIUS_THREADS: threads that bind the UDP ports and do the per-packet work (docs/radius.md "Threads"); 0: the main thread alone. */
  radiusThreads: number;
  /** RADIUS over TLS (RFC 6614) beside UDP: on when RADSEC_CERT_FILE, RADSEC_KEY_FILE and RADSEC_CA_FILE are set. */
  radsec: RadsecConfig | null;
  /** NAS_DICTIONARY_DIR: an operator's FreeRADIUS dictionaries, read after radius/dictionaries; undefined: ours only. */
  nasDictionaryDir: string | undefined;
  nodeId: string;
  /** RFC 3161 time-stamp authority for 5651 evidence packs; undefined: packs carry no tokens. */
  tsaUrl: string | undefined;
  /**
   * Key of the HMAC under which OTP codes are stored and compared: OTP_SECRET (at least 32 bytes)
   * when set, else derived from JWT_SECRET with a label of its own. Changing it kills live codes.
   */
  otpKey: Uint8Array;
  /** Service-wide SMTP server for e-mail OTP (smtp:// or smtps://, may hold credentials: never logged); a tenant may name its own. */
  smtpUrl: string | undefined;
  /** From address of OTP e-mails when a tenant's settings give none. */
  smtpFrom: string;
  /**
   * PORTAL_PUBLIC_URL: where sponsors open the approve and reject links of their e-mails
   * (http(s)://host[:port], the portal's public address). Unset: sponsor approval answers 503. Never
   * taken from a request's Host header, which a guest could forge to send the link elsewhere.
   */
  portalPublicUrl: string | undefined;
  /** TLS_CERT_FILE and TLS_KEY_FILE (PEM): the HTTP listeners serve HTTPS themselves (RFC 8908 wants HTTPS); undefined: plain HTTP. */
  tls: { certFile: string; keyFile: string } | undefined;
  /** When the engine raises incidents itself (engine/incidents/incident-watch.ts). */
  incidents: IncidentThresholds;
  /** The dashboard's SSE streams (http/sse.ts, engine/events/). */
  streams: StreamSettings;
  /** REDIS_WAIT_REPLICAS, REDIS_WAIT_TIMEOUT_MS: replicas that must hold a sign-in's writes before its answer (0: none). */
  redisWait: { replicas: number; timeoutMs: number };
  /**
   * ALLOW_PRIVATE_TARGETS: tenants' outbound URLs (providers, SMTP) may lead to loopback, private,
   * link-local, CGNAT and ULA addresses (tests, on-premises installs). Cloud metadata addresses never.
   */
  allowPrivateTargets: boolean;
  /**
   * TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For is believed
   * (http/client-address.ts); empty: the socket's peer is the client.
   */
  trustedProxies: readonly Cidr[];
  /** The HTTP edge against hostile clients (http/router.ts, http/server.ts; docs/http-edge.md). */
  http: HttpEdgeSettings;
  /**
   * SECRETS_KEY (current: seals tenant secrets given inline) and SECRETS_KEY_OLD (comma-separated:
   * still open rows sealed under them, until `cli secrets rotate` re-seals those). Without
   * SECRETS_KEY a tenant can only reference its secrets as env://NAME.
   */
  secretsKeys: { current: SecretKey | undefined; old: SecretKey[] };
  /**
   * Room sign-in's PMS links (engine/pms/, docs/pms.md): PMS_KEEPALIVE_SEC (idle time before a
   * keep-alive probe; the link is dead after three without a frame), PMS_STALE_AFTER_SEC (the
   * in-house list is trusted this long after the PMS was last heard), PMS_LEASE_MS (one process
   * holds a link; another takes over this long after it stops renewing), PMS_RECONNECT_MAX_SEC
   * (the reconnection back-off's ceiling).
   */
  pms: PmsTimers;
  /** Webhook deliveries (engine/webhooks/, docs/webhooks.md). */
  webhooks: WebhookSettings;
  /**
   * Scheduled report mail (engine/schedules/, docs/reports.md): REPORT_SCHEDULER (this process runs
   * the scheduler; every process should), REPORT_SCHEDULE_POLL_MS (how often it looks for due periods),
   * REPORT_SCHEDULE_LEASE_SEC (how long a run being sent is this process's before another takes it over),
   * REPORT_MAIL_MAX_CSV_BYTES (the session CSV attached up to this size; past it a partial one, named so).
   */
  reportSchedules: { run: boolean; pollMs: number; leaseMs: number; maxCsvBytes: number };
  /** ACCESS_LOG: one pino line per HTTP request (method, route pattern, status, duration, request id); docs/observability.md. */
  accessLog: boolean;
}

export interface WebhookSettings {
  /** First retry's back-off, ms, doubled per attempt with jitter (WEBHOOK_RETRY_BASE_MS). */
  retryBaseMs: number;
  /** Attempts in flight per tenant and process (WEBHOOK_TENANT_CONCURRENCY): a slow receiver holds only its tenant's. */
  tenantConcurrency: number;
  /** How often each process looks for owed deliveries, ms (WEBHOOK_POLL_MS). */
  pollMs: number;
  /** The dispatcher thread's nice value, 0-19 (WEBHOOK_THREAD_NICE): above 0 the sign-ins' main thread goes first for the CPU. */
  threadNice: number;
}

export interface HttpEdgeSettings {
  /** A request body must arrive whole within this, ms, else 408 and the connection closed (HTTP_BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
  /** Requests (streams included) one peer address may hold open at once; past it 429 (HTTP_MAX_CONNECTIONS_PER_ADDRESS). */
  maxConnectionsPerAddress: number;
  /** A listener of its own for /metrics and /readyz (METRICS_PORT); undefined: they stay on the main listener. */
  metricsPort: number | undefined;
  /** A Bearer token /metrics requires (METRICS_TOKEN); undefined: none. Never logged. */
  metricsToken: string | undefined;
}

/** The incident detectors' thresholds (INCIDENT_* variables); tests set short ones. */
export interface IncidentThresholds {
  /** How often every process runs the detectors, ms. */
  watchMs: number;
  /** A NAS heard from before and silent this long, s, is `nas_silent` (and offline on the dashboard). */
  nasSilentSec: number;
  /**
   * `signin_failure_surge` (engine/incidents/surge-window.ts): rejected sign-ins in the sliding window of
   * surgeWindowSec above surgeRejects (the floor), and above surgeBaselineFactor times the hour before's rate per
   * window or above surgeRejectPct of the window's decisions.
   */
  surgeRejects: number;
  surgeRejectPct: number;
  surgeWindowSec: number;
  surgeBaselineFactor: number;
  /** Errors above this share (%) of at least errorMinDecisions decisions in 5 minutes: `error_rate_spike`. */
  errorRatePct: number;
  errorMinDecisions: number;
  /** The oldest audit record not yet in Postgres older than this, min: `audit_anchor_lag`. */
  anchorLagMin: number;
  /** An OTP provider failing this often within providerWindowSec in one process: `otp_provider_failing`. */
  providerFailures: number;
  providerWindowSec: number;
  /** Time-stamp failures and dead letters of this window, s, raise `tsa_failure` and `audit_dead_letters`. */
  recentSec: number;
}

export interface StreamSettings {
  /** A client whose unsent bytes pass this is dropped (STREAM_MAX_BUFFERED_BYTES). */
  maxBufferedBytes: number;
  /** A client that stays backed up this long is dropped, whatever it owes (STREAM_MAX_BACKED_UP_MS). */
  maxBackedUpMs: number;
  /** Comment heartbeat interval (STREAM_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** At most one event per kind per this window and client (STREAM_COALESCE_MS; 0: no coalescing). */
  coalesceMs: number;
  /** Open streams per credential (an API key, a JWT subject) of a tenant in this process (STREAM_MAX_PER_PRINCIPAL). */
  maxPerPrincipal: number;
  /** Open streams per tenant in this process (STREAM_MAX_PER_TENANT). */
  maxPerTenant: number;
  /** Open streams in this process, all tenants (STREAM_MAX_PER_PROCESS). */
  maxPerProcess: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super('Invalid configuration:\n' + problems.map((p) => '  - ' + p).join('\n'));
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Reads and checks the environment. Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];

  const port = (name: string, fallback: number | undefined): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      problems.push(`${name}=${JSON.stringify(raw)} is not a TCP port (0-65535)`);
      return fallback;
    }
    return n;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };
  /**
   * INCIDENT_SURGE_WINDOW_SEC: whole 10-second steps, and long enough that a burst of a few seconds is in the window
   * at one check at least (checks every INCIDENT_WATCH_MS, a burst spanning two steps): the watch interval plus 20 s.
   * Unset: 60 s, or that minimum when INCIDENT_WATCH_MS is longer.
   */
  const surgeWindow = (): number => {
    const watchMs = Number(env.INCIDENT_WATCH_MS);
    const least = Math.ceil((Number.isInteger(watchMs) && watchMs > 0 ? watchMs : 30_000) / 10_000) * 10 + 20;
    if (!env.INCIDENT_SURGE_WINDOW_SEC) return Math.max(60, least);
    const v = int('INCIDENT_SURGE_WINDOW_SEC', 60, 10, 3600);
    if (v % 10 !== 0 || v < least) {
      problems.push(`INCIDENT_SURGE_WINDOW_SEC=${v} must be a multiple of 10 and at least ${least} (INCIDENT_WATCH_MS in seconds plus 20, so no burst falls between two checks)`);
    }
    return v;
  };
  const optionalUrl = (name: string, protocols: string[]): string | undefined => {
    const raw = env[name];
    if (!raw) return undefined;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) problems.push(`${name} must use ${protocols.join(' or ')}, not ${u.protocol}`);
    } catch {
      problems.push(`${name} is not a URL`);
    }
    return raw;
  };

  const bool = (name: string, fallback: boolean): boolean => {
    const raw = (env[name] ?? '').trim().toLowerCase();
    if (raw === '') return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name}=${JSON.stringify(env[name])} must be true or false (or 1 or 0)`);
    return fallback;
  };
  const host = (name: string, fallback: string, localhost: boolean): string => {
    const raw = env[name];
    if (!raw) return fallback;
    if (isIP(raw) === 0 && !(localhost && raw === 'localhost')) {
      problems.push(`${name}=${JSON.stringify(raw)} must be an IP address to listen on${localhost ? ' (or localhost)' : ''}`);
    }
    return raw;
  };

  const url = (name: string, protocols: string[]): string => {
    if (!env[name]) {
      problems.push(`${name} is not set (npm start sets it for you when it starts local servers)`);
      return '';
    }
    return optionalUrl(name, protocols) ?? '';
  };

  const secret = env.JWT_SECRET ?? '';
  const jwtSecret = new TextEncoder().encode(secret);
  if (jwtSecret.byteLength < 32) {
    problems.push(`JWT_SECRET must be at least 32 bytes (HS256 key); it is ${jwtSecret.byteLength}`);
  }
  const otpSecret = env.OTP_SECRET ? new TextEncoder().encode(env.OTP_SECRET) : undefined;
  if (otpSecret && otpSecret.byteLength < 32) problems.push(`OTP_SECRET must be at least 32 bytes; it is ${otpSecret.byteLength}`);
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.has(logLevel)) problems.push(`LOG_LEVEL=${JSON.stringify(logLevel)} is not one of ${[...LOG_LEVELS].join(', ')}`);

  const config: Config = {
    httpHost: host('HTTP_HOST', '0.0.0.0', true),
    httpPort: port('HTTP_PORT', 8080) ?? 8080,
    portalPort: port('PORTAL_PORT', undefined),
    consolePort: port('CONSOLE_PORT', undefined),
    dashboardPort: port('DASHBOARD_PORT', undefined),
    redisUrl: isClusterUrl(env.REDIS_URL ?? '') ? clusterUrl(env.REDIS_URL!, problems) : url('REDIS_URL', ['redis:', 'rediss:']),
    databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseReplicaUrl: optionalUrl('DATABASE_REPLICA_URL', ['postgres:', 'postgresql:']),
    jwtSecret,
    jwtLeewaySec: int('JWT_LEEWAY_SEC', 30, 0, 300),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    voucherImportMaxBytes: int('VOUCHER_IMPORT_MAX_BYTES', 50 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    logLevel,
    defaultSessionMinutes: int('DEFAULT_SESSION_MINUTES', 1440, 1, 525600),
    defaultIdleTimeoutSec: int('DEFAULT_IDLE_TIMEOUT_SEC', 900, 0, 86400),
    actorThreads: int('ACTOR_THREADS', availableParallelism(), 1, 64),
    hotspotLeaseMs: int('HOTSPOT_LEASE_MS', 30_000, 3_000, 300_000),
    radiusHost: host('RADIUS_HOST', '0.0.0.0', false),
    radiusAuthPort: port('RADIUS_AUTH_PORT', 1812) ?? 1812,
    radiusAcctPort: port('RADIUS_ACCT_PORT', 1813) ?? 1813,
    radiusEnabled: bool('RADIUS_ENABLED', true),
    radiusThreads: int('RADIUS_THREADS', 0, 0, 64),
    radsec: radsecSettings(env, problems, port('RADSEC_PORT', 2083) ?? 2083),
    nasDictionaryDir: dictionaryDir(env, problems),
    // Stable across restarts, so a restarted process takes back its hotspot leases and its
    // unacknowledged outbox entries at once. Two processes on one host need distinct NODE_IDs.
    nodeId: env.NODE_ID || hostname(),
    tsaUrl: optionalUrl('TSA_URL', ['http:', 'https:']),
    otpKey: otpSecret ?? deriveOtpKey(jwtSecret),
    smtpUrl: optionalUrl('SMTP_URL', ['smtp:', 'smtps:']),
    smtpFrom: env.SMTP_FROM || 'Guest Wi-Fi <no-reply@localhost>',
    portalPublicUrl: optionalUrl('PORTAL_PUBLIC_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    tls: tlsFiles(env, problems),
    incidents: {
      watchMs: int('INCIDENT_WATCH_MS', 30_000, 100, 3_600_000),
      nasSilentSec: int('INCIDENT_NAS_SILENT_SEC', 300, 1, 86_400),
      surgeRejects: int('INCIDENT_SURGE_REJECTS', 50, 1, 1_000_000),
      surgeRejectPct: int('INCIDENT_SURGE_REJECT_PCT', 50, 0, 100),
      surgeWindowSec: surgeWindow(),
      surgeBaselineFactor: int('INCIDENT_SURGE_BASELINE_FACTOR', 3, 1, 1000),
      errorRatePct: int('INCIDENT_ERROR_RATE_PCT', 5, 0, 100),
      errorMinDecisions: int('INCIDENT_ERROR_MIN_DECISIONS', 20, 1, 1_000_000),
      anchorLagMin: int('INCIDENT_ANCHOR_LAG_MIN', 10, 1, 1440),
      providerFailures: int('INCIDENT_PROVIDER_FAILURES', 5, 1, 100_000),
      providerWindowSec: int('INCIDENT_PROVIDER_WINDOW_SEC', 300, 1, 86_400),
      recentSec: int('INCIDENT_RECENT_SEC', 3600, 1, 7 * 86_400),
    },
    streams: {
      maxBufferedBytes: int('STREAM_MAX_BUFFERED_BYTES', 64 * 1024, 256, 16 * 1024 * 1024),
      maxBackedUpMs: int('STREAM_MAX_BACKED_UP_MS', 30_000, 100, 600_000),
      heartbeatMs: int('STREAM_HEARTBEAT_MS', 15_000, 10, 300_000),
      coalesceMs: int('STREAM_COALESCE_MS', 500, 0, 60_000),
      maxPerPrincipal: int('STREAM_MAX_PER_PRINCIPAL', 20, 1, 1_000_000),
      maxPerTenant: int('STREAM_MAX_PER_TENANT', 10_000, 1, 1_000_000),
      maxPerProcess: int('STREAM_MAX_PER_PROCESS', 50_000, 1, 1_000_000),
    },
    http: {
      bodyTimeoutMs: int('HTTP_BODY_TIMEOUT_MS', 30_000, 100, 3_600_000),
      maxConnectionsPerAddress: int('HTTP_MAX_CONNECTIONS_PER_ADDRESS', 1000, 1, 1_000_000),
      metricsPort: port('METRICS_PORT', undefined),
      metricsToken: metricsToken(env, problems),
    },
    redisWait: { replicas: int('REDIS_WAIT_REPLICAS', 0, 0, 16), timeoutMs: int('REDIS_WAIT_TIMEOUT_MS', 500, 1, 60_000) },
    allowPrivateTargets: privateTargets(env, bool, problems),
    trustedProxies: cidrList('TRUSTED_PROXIES', env.TRUSTED_PROXIES ?? '', problems),
    secretsKeys: secretsKeys(env, problems),
    webhooks: {
      retryBaseMs: int('WEBHOOK_RETRY_BASE_MS', 1000, 1, 3_600_000),
      tenantConcurrency: int('WEBHOOK_TENANT_CONCURRENCY', 64, 1, 1000),
      pollMs: int('WEBHOOK_POLL_MS', 100, 10, 60_000),
      threadNice: int('WEBHOOK_THREAD_NICE', 0, 0, 19),
    },
    pms: pmsSettings(int, bool),
    reportSchedules: {
      run: bool('REPORT_SCHEDULER', true),
      pollMs: int('REPORT_SCHEDULE_POLL_MS', 60_000, 100, 3_600_000),
      leaseMs: int('REPORT_SCHEDULE_LEASE_SEC', 600, 300, 86_400) * 1000,
      // 64 KiB to 16 MiB: 16 MiB is about 22.4 MB once base64-encoded, under the ~25 MB most SMTP servers take.
      maxCsvBytes: int('REPORT_MAIL_MAX_CSV_BYTES', 10 * 1024 * 1024, 65_536, 16 * 1024 * 1024),
    },
    accessLog: bool('ACCESS_LOG', false),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** REDIS_URL naming a Redis Cluster's seed nodes (engine/redis/redis-client.ts): checked here, kept as given. */
function clusterUrl(raw: string, problems: string[]): string {
  try {
    parseClusterUrl(raw);
  } catch (err) {
    problems.push(`REDIS_URL ${(err as Error).message}`);
  }
  return raw;
}
