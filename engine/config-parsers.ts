import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseSecretKey, type SecretKey } from './secrets/secret-box.js';

/**
 * The parsers of engine/config.ts's settings that need more than a number or
 * a switch (each reports its own problems, one line each): kept apart so
 * config.ts stays the list of settings and their defaults.
 */

/** The PMS links' timers (Config.pms). */
export interface PmsTimers { keepAliveMs: number; deadAfterMs: number; staleAfterMs: number; leaseMs: number; maxBackoffMs: number; holdLinks: boolean }

/** An address range: `address` canonical (as node:net prints it), `prefix` its length in bits. */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * ALLOW_PRIVATE_TARGETS, also accepted as WEBHOOK_ALLOW_PRIVATE_TARGETS: one switch for every
 * outbound URL a tenant gives (providers, SMTP, webhooks). Both set and disagreeing is a mistake.
 */
export function privateTargets(env: NodeJS.ProcessEnv, bool: (name: string, fallback: boolean) => boolean, problems: string[]): boolean {
  const general = bool('ALLOW_PRIVATE_TARGETS', false);
  const webhook = bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', false);
  const set = (name: string): boolean => (env[name] ?? '').trim() !== '';
  if (set('ALLOW_PRIVATE_TARGETS') && set('WEBHOOK_ALLOW_PRIVATE_TARGETS') && general !== webhook) {
    problems.push('ALLOW_PRIVATE_TARGETS and WEBHOOK_ALLOW_PRIVATE_TARGETS are one switch and disagree: set one of them');
  }
  return general || webhook;
}

/** PMS_*: the links' timers (Config.pms). */
export function pmsSettings(int: (name: string, fallback: number, min: number, max: number) => number,
  bool: (name: string, fallback: boolean) => boolean): PmsTimers {
  const keepAliveSec = int('PMS_KEEPALIVE_SEC', 30, 1, 600);
  return {
    keepAliveMs: keepAliveSec * 1000, deadAfterMs: 3 * keepAliveSec * 1000,
    staleAfterMs: int('PMS_STALE_AFTER_SEC', 120, 1, 86_400) * 1000,
    leaseMs: int('PMS_LEASE_MS', 15_000, 1000, 600_000),
    maxBackoffMs: int('PMS_RECONNECT_MAX_SEC', 60, 1, 3600) * 1000,
    holdLinks: bool('PMS_HOLD_LINKS', true),
  };
}

/** METRICS_TOKEN: long enough not to be guessed (it guards what the service tells about its traffic). */
export function metricsToken(env: NodeJS.ProcessEnv, problems: string[]): string | undefined {
  const raw = env.METRICS_TOKEN ?? '';
  if (raw === '') return undefined;
  if (raw.length < 16 || /\s/.test(raw)) problems.push(`METRICS_TOKEN must be at least 16 characters without spaces; it is ${raw.length}`);
  return raw;
}

/** SECRETS_KEY and SECRETS_KEY_OLD, each 32 bytes in hex or base64; a bad one is named, never echoed. */
export function secretsKeys(env: NodeJS.ProcessEnv, problems: string[]): { current: SecretKey | undefined; old: SecretKey[] } {
  const bad = '32 bytes written as 64 hex digits or as base64 (e.g. openssl rand -base64 32)';
  let current: SecretKey | undefined;
  if (env.SECRETS_KEY) {
    current = parseSecretKey(env.SECRETS_KEY) ?? undefined;
    if (!current) problems.push(`SECRETS_KEY must be ${bad}`);
  }
  const old: SecretKey[] = [];
  const olds = (env.SECRETS_KEY_OLD ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  olds.forEach((raw, i) => {
    const k = parseSecretKey(raw);
    if (k) old.push(k);
    else problems.push(`SECRETS_KEY_OLD (key ${i + 1} of ${olds.length}) must be ${bad}`);
  });
  if (olds.length > 0 && !env.SECRETS_KEY) problems.push('SECRETS_KEY_OLD needs SECRETS_KEY: the old keys only open what the current one re-seals');
  return { current, old };
}

/** Both TLS files or neither; each must be readable now (start-up), not at the first handshake. */
export function tlsFiles(env: NodeJS.ProcessEnv, problems: string[]): { certFile: string; keyFile: string } | undefined {
  const certFile = env.TLS_CERT_FILE ?? '';
  const keyFile = env.TLS_KEY_FILE ?? '';
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    problems.push(`TLS_CERT_FILE and TLS_KEY_FILE go together: set both (HTTPS) or neither (plain HTTP); only ${certFile ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'} is set`);
    return undefined;
  }
  readable(env, ['TLS_CERT_FILE', 'TLS_KEY_FILE'], problems);
  return { certFile, keyFile };
}

function readable(env: NodeJS.ProcessEnv, names: readonly string[], problems: string[]): void {
  for (const name of names) {
    try {
      accessSync(env[name]!, fsConstants.R_OK);
    } catch (err) {
      problems.push(`${name}=${JSON.stringify(env[name])} is not a readable file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
}

/** RADIUS over TLS (RFC 6614): the server's certificate and key, and the CA its NASes' client certificates chain to. */
export interface RadsecConfig {
  certFile: string;
  keyFile: string;
  caFile: string;
  /** TCP port; 2083 (RFC 6614 §2.1) by default. */
  port: number;
}

/** RADSEC_*: all three PEM files or none (RadSec off), each readable now, not at the first NAS's handshake. */
export function radsecSettings(env: NodeJS.ProcessEnv, problems: string[], port: number): RadsecConfig | null {
  const names = ['RADSEC_CERT_FILE', 'RADSEC_KEY_FILE', 'RADSEC_CA_FILE'] as const;
  const missing = names.filter((n) => !env[n]);
  if (missing.length === names.length) {
    if (env.RADSEC_PORT) problems.push(`RADSEC_PORT is set but RadSec is off: set ${names.join(', ')}`);
    return null;
  }
  if (missing.length > 0) {
    problems.push(`RadSec needs all of ${names.join(', ')}; missing ${missing.join(', ')}`);
    return null;
  }
  readable(env, names, problems);
  return { certFile: env.RADSEC_CERT_FILE!, keyFile: env.RADSEC_KEY_FILE!, caFile: env.RADSEC_CA_FILE!, port };
}

/**
 * A comma-separated list of CIDRs, IPv4 and IPv6 (`10.0.0.0/8, fd00::/8`); a
 * bare address is one host (/32, /128). Each bad entry is its own problem.
 */
export function cidrList(name: string, raw: string, problems: string[]): Cidr[] {
  const out: Cidr[] = [];
  for (const part of raw.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const bits = slash < 0 ? String(max) : entry.slice(slash + 1);
    const prefix = Number(bits);
    if (family === 0 || !/^\d{1,3}$/.test(bits) || prefix > max) {
      problems.push(`${name}: ${JSON.stringify(entry)} is not an IPv4 or IPv6 CIDR (address/prefix, e.g. 10.0.0.0/8 or fd00::/8)`);
      continue;
    }
    out.push({ address, prefix, family: family === 6 ? 'ipv6' : 'ipv4' });
  }
  return out;
}

/**
 * NAS_DICTIONARY_DIR: a directory of FreeRADIUS-format dictionaries an operator
 * adds to ours (radius/radius-dictionary.ts reads them at start, after ours).
 * Here only its existence is checked; a bad file in it stops the start with
 * its file and line (scripts/serve.ts).
 */
export function dictionaryDir(env: NodeJS.ProcessEnv, problems: string[]): string | undefined {
  const dir = env.NAS_DICTIONARY_DIR;
  if (!dir) return undefined;
  try {
    if (!statSync(dir).isDirectory()) problems.push(`NAS_DICTIONARY_DIR=${JSON.stringify(dir)} is not a directory`);
    else accessSync(dir, fsConstants.R_OK | fsConstants.X_OK);
  } catch (err) {
    problems.push(`NAS_DICTIONARY_DIR=${JSON.stringify(dir)} is not a readable directory (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return dir;
}
