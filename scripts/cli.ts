import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  ConfigError, DEFAULT_MODULES, Engine, MODULES, createLogger, createPool, hourOf, loadConfig, migrate, migrationStatus, projectPath, signOperatorToken, signPlatformToken,
} from '../engine/index.js';
import { withLocalDefaults } from './local-services.js';

const USAGE = `Usage: npm run -s cli -- <command>

  tenant create --name NAME [--modules m1,m2] [--json]
      Creates a tenant and its first API key (shown once).
  tenant list [--json]
  apikey create --tenant ID [--label TEXT]
  apikey revoke --tenant ID --key KEY_ID
  token --tenant ID [--roles admin] [--ttl 3600] [--sub NAME]
      Prints an HS256 operator JWT.
  token --platform [--ttl 3600] [--sub NAME]
      Prints a platform administration JWT (roles ["platform_admin"], no
      tenant_id), accepted on the /admin/ routes only.
  audit verify --tenant ID [--from YYYY-MM-DD --to YYYY-MM-DD]
      Recomputes the tenant's audit chain from Postgres and names the first
      record that breaks it (exit 1 when broken).
  migrate status [--json]
      Lists every migration by its file name, applied (with when) or pending, and
      any the database has that this release does not know (a newer one applied them).
      Reads only; exit 0.
  migrate up
      Applies the pending migrations, each in its own transaction (as every start
      does), and names them.
  privacy release-holds [--now ISO-8601]
      Ends the legal holds due by then (as the hourly retention job does): their held session
      rows are pseudonymised (docs/privacy.md). --now drives the clock for a check ahead of time.
  redis reload --tenant ID
      Loads the tenant's vouchers from Postgres into Redis (after a Redis loss).
  reports rebuild [--tenant ID] [--hotspot ID] [--from YYYY-MM-DD --to YYYY-MM-DD]
      Recomputes the report rollups from the raw session rows (every tenant
      without --tenant; every day with sessions without --from/--to), a month
      at a time; dates are local days of each hotspot (docs/reports.md). Sign-in
      counts Redis still holds (the last 25 hours) are moved into Postgres again.
  secrets rotate [--json]
      Re-encrypts every tenant secret sealed under an older key with SECRETS_KEY;
      the older keys go in SECRETS_KEY_OLD (comma-separated). Exit 1 when a row
      opens under no key given (it is left as it is).

Uses REDIS_URL, DATABASE_URL, JWT_SECRET and SECRETS_KEY; without them, the local servers
and secret of npm start (.data/).
Modules: ${MODULES.join(', ')} (default ${DEFAULT_MODULES.join(',')})`;

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv, allowPositionals: true,
    options: {
      name: { type: 'string' }, modules: { type: 'string' }, json: { type: 'boolean' }, tenant: { type: 'string' },
      label: { type: 'string' }, key: { type: 'string' }, roles: { type: 'string' }, ttl: { type: 'string' },
      sub: { type: 'string' }, now: { type: 'string' }, platform: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, from: { type: 'string' }, to: { type: 'string' },
      hotspot: { type: 'string' },
    },
  });
  const [cmd, sub] = positionals;
  if (values.help || !cmd) return void process.stdout.write(USAGE + '\n');
  const out = (v: unknown): void => { process.stdout.write((typeof v === 'string' ? v : JSON.stringify(v)) + '\n'); };
  const need = (v: string | undefined, flag: string): string => {
    if (!v) throw new UsageError(`${flag} is required`);
    return v;
  };

  // On a server (the env file, the container, the chart's Secret) the three are given and there is no .data/: the CLI
  // then reads the environment as serve.js does, and never makes .data/ or a secret of its own (a SECRETS_KEY the
  // service does not have). npm start's local servers and generated secrets are for a developer's machine.
  const given = process.env.REDIS_URL && process.env.DATABASE_URL && process.env.JWT_SECRET && !existsSync(projectPath('.data'));
  const { env } = given ? { env: process.env } : await withLocalDefaults(process.env, (l) => process.stderr.write(l + '\n'));
  const config = loadConfig({ LOG_LEVEL: 'warn', ...env });
  // Before the engine: its start applies pending migrations, which `status` must only report.
  if (cmd === 'migrate') return migrateCommand(sub, config.databaseUrl, values.json === true, out);
  const engine = new Engine(config, createLogger(config.logLevel, 2), { sink: false, actors: false });
  await engine.start();
  try {
    if (cmd === 'token' && values.platform) {
      if (values.tenant || values.roles) throw new UsageError('--platform takes neither --tenant nor --roles');
      return out(await signPlatformToken(config.jwtSecret, ttlOf(values.ttl), values.sub ?? 'cli'));
    }
    if (cmd === 'token') {
      const tenant = await engine.tenants.get(need(values.tenant, '--tenant'));
      if (!tenant) throw new UsageError(`no tenant ${values.tenant}`);
      const roles = (values.roles ?? 'admin').split(',').filter(Boolean);
      return out(await signOperatorToken(config.jwtSecret, tenant.id, roles, ttlOf(values.ttl), values.sub ?? 'cli'));
    }
    if (cmd === 'tenant' && sub === 'create') {
      const modules = values.modules ? values.modules.split(',').map((m) => m.trim()).filter(Boolean) : DEFAULT_MODULES;
      const unknown = modules.filter((m) => !(MODULES as readonly string[]).includes(m));
      if (unknown.length) throw new UsageError(`unknown module(s): ${unknown.join(', ')}`);
      const tenant = await engine.tenants.create(need(values.name, '--name'), modules);
      const { apiKey } = await engine.tenants.createApiKey(tenant.id, 'initial');
      if (values.json) return out({ tenant_id: tenant.id, api_key: apiKey });
      return out(`tenant ${tenant.id} created (modules: ${modules.join(', ')})\nAPI key (shown once): ${apiKey}`);
    }
    if (cmd === 'tenant' && sub === 'list') {
      const list = await engine.tenants.list();
      if (values.json) return out(list);
      return out(list.map((t) => `${t.id}\t${t.name}\t${t.modules.join(',')}`).join('\n'));
    }
    if (cmd === 'apikey' && sub === 'create') {
      const { id, apiKey } = await engine.tenants.createApiKey(need(values.tenant, '--tenant'), values.label);
      return out(values.json ? { id, api_key: apiKey } : apiKey);
    }
    if (cmd === 'apikey' && sub === 'revoke') {
      const keyId = need(values.key, '--key').split('_').slice(0, 2).join('_');
      const ok = await engine.tenants.revokeApiKey(need(values.tenant, '--tenant'), keyId);
      if (!ok) throw new UsageError(`no live key ${keyId} for that tenant`);
      return out(`revoked ${keyId}`);
    }
    if (cmd === 'audit' && sub === 'verify') {
      for (const d of [values.from, values.to]) if (d && !/^\d{4}-\d{2}-\d{2}$/.test(d)) throw new UsageError(`not a date: ${d}`);
      const r = await engine.audit.verify(need(values.tenant, '--tenant'), values.from, values.to);
      if (values.json) out(r);
      else if (r.valid) out(`chain valid: ${r.records} records`);
      else out(`chain BROKEN at seq ${r.first_break!.seq}${r.first_break!.id ? ` (record ${r.first_break!.id})` : ''}: ${r.first_break!.problem}: ${r.first_break!.detail}`);
      if (!r.valid) process.exitCode = 1;
      return;
    }
    if (cmd === 'privacy' && sub === 'release-holds') {
      const nowMs = values.now ? Date.parse(values.now) : Date.now();
      if (Number.isNaN(nowMs)) throw new UsageError(`not a time: ${values.now}`);
      const n = await engine.privacy.releaseDueHolds(nowMs, createLogger('warn', 2));
      return out(values.json ? { released: n } : `released ${n} legal holds`);
    }
    if (cmd === 'secrets' && sub === 'rotate') {
      const r = await engine.secrets.rotate();
      if (values.json) out(r);
      else out(`re-encrypted ${r.rotated} secrets under key ${r.key_id}${r.unreadable.length ? `; ${r.unreadable.length} opened under no key given: ${r.unreadable.map((u) => `${u.tenant_id} ${u.name} (key ${u.key_id})`).join(', ')}` : ''}`);
      if (r.unreadable.length) process.exitCode = 1;
      return;
    }
    if (cmd === 'reports' && sub === 'rebuild') {
      const tenants = values.tenant ? [values.tenant] : (await engine.tenants.list()).map((t) => t.id);
      let total = 0;
      for (const t of tenants) {
        const n = await engine.reports.rebuild(t, values.from, values.to, values.hotspot);
        // Sign-in counts live in Redis's hour buckets for 25 hours: what is there is moved again (to its value).
        const hour = hourOf(Date.now());
        await engine.signInMover.moveTenant(t, hour - 25, hour);
        total += n;
        if (values.json) out({ tenant_id: t, sessions: n });
      }
      if (!values.json) out(`rebuilt the rollups of ${tenants.length} tenant(s) from ${total} sessions`);
      return;
    }
    if (cmd === 'redis' && sub === 'reload') {
      const n = await engine.vouchers.loadIntoRedis(need(values.tenant, '--tenant'));
      return out(`loaded ${n} vouchers`);
    }
    throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  } finally {
    await engine.close();
  }
}

class UsageError extends Error {}

async function migrateCommand(sub: string | undefined, databaseUrl: string, json: boolean, out: (v: unknown) => void): Promise<void> {
  if (sub !== 'status' && sub !== 'up') throw new UsageError('migrate status | migrate up');
  const log = createLogger('warn', 2);
  const pool = createPool(databaseUrl, log, 1);
  try {
    if (sub === 'up') {
      const applied = await migrate(pool, log);
      return out(json ? { applied } : applied.length ? applied.map((f) => `applied  ${f}`).join('\n') : 'nothing pending');
    }
    const st = await migrationStatus(pool);
    if (json) return out(st);
    const lines = st.migrations.map((m) => `${m.applied_at ? 'applied' : 'pending'}  ${m.file}${m.applied_at ? `  ${m.applied_at}` : ''}`);
    for (const u of st.unknown) lines.push(`unknown  ${u}  (applied by a newer release)`);
    const pending = st.migrations.filter((m) => !m.applied_at).length;
    lines.push(`${st.migrations.length - pending} applied, ${pending} pending`);
    return out(lines.join('\n'));
  } finally {
    await pool.end();
  }
}

function ttlOf(raw: string | undefined): number {
  const ttl = Number(raw ?? 3600);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError('--ttl must be a positive number of seconds');
  return ttl;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) process.stderr.write(`${err.message}\n\n${USAGE}\n`);
  else if (err instanceof ConfigError) process.stderr.write(err.message + '\n');
  else process.stderr.write(`error: ${(err as Error).message}\n`);
  process.exit(2);
});
