import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/**
 * FreeRADIUS 3.2 (Debian's `freeradius`) as a yardstick for the RADIUS
 * benchmarks: installed when missing, configured from scratch in a folder of
 * the caller's, run in the foreground as a child process, stopped at the end.
 * Nothing here touches /etc/freeradius or the system service, except stopping
 * that service when it is running (Debian's package starts it on install, and
 * it would then hold 1812/1813).
 */

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Puts `freeradius` and `radclient` on the PATH from Debian's packages when they are missing and we are root. */
export function ensureFreeradiusInstalled(say: (line: string) => void): void {
  if (has('freeradius') && has('radclient')) return;
  if (process.getuid?.() !== 0 || !has('apt-get')) {
    throw new Error('freeradius and radclient are needed (Debian/Ubuntu: sudo apt-get install freeradius freeradius-utils)');
  }
  say('freeradius/radclient missing: installing freeradius and freeradius-utils from Debian packages (apt-get)...');
  aptGet(['update', '-qq'], ['install', '-y', '-qq', 'freeradius', 'freeradius-utils']);
}

function aptGet(...runs: string[][]): void {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of runs) {
    if (spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env }).status !== 0) throw new Error(`apt-get ${args.join(' ')} failed`);
  }
}

/** Pid of Debian's freeradius daemon when it runs (its pid file, and a live process of that name behind it). */
function debianDaemonPid(): number | null {
  for (const file of ['/run/freeradius/freeradius.pid', '/var/run/freeradius/freeradius.pid']) {
    try {
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (pid > 0 && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'freeradius') return pid;
    } catch { /* no such file or process */ }
  }
  return null;
}

/**
 * Stops Debian's freeradius service if it runs: the package starts it on
 * install where a service manager allows it, and it would sit on 1812/1813.
 * Through the service manager, so its state stays consistent; the benchmark
 * never needs those ports (its servers take free ones).
 */
export function stopDebianFreeradius(say: (line: string) => void): void {
  if (debianDaemonPid() === null) return;
  say('Debian\'s freeradius service is running (it holds 1812/1813): stopping it');
  const attempts = existsSync('/run/systemd/system')
    ? [['systemctl', 'stop', 'freeradius']]
    : [['service', 'freeradius', 'stop'], ['invoke-rc.d', 'freeradius', 'stop']];
  for (const [cmd, ...args] of attempts) {
    if (has(cmd!) && spawnSync(cmd!, args, { stdio: 'ignore' }).status === 0 && debianDaemonPid() === null) return;
  }
  if (debianDaemonPid() !== null) say('  could not stop it; the benchmark goes on (it uses other ports)');
}

export interface FreeradiusOptions {
  /** An empty folder of the caller's: configuration, pid file and logs go there. */
  dir: string;
  host: string;
  authPort: number;
  acctPort: number;
  /** Secret of the one client (the load generators on `host`). */
  secret: string;
  /** User-Names accepted, exactly as the requests carry them. */
  macs: string[];
  sessionTimeoutSec: number;
  bandwidthDownBps: number;
  /**
   * The stack deployments run instead of `files` and no accounting: rlm_sql on this PostgreSQL database
   * (prepared by prepareRadiusDatabase), with Debian's stock queries, for authorize and accounting.
   */
  sql?: PgTarget;
}

/** Where rlm_sql connects: the bench's own PostgreSQL (trust authentication, no password). */
export interface PgTarget { host: string; port: number; user: string; database: string }

/**
 * The smallest configuration that does what the engine does for an authorised
 * MAC: one client that must sign its Access-Requests (Message-Authenticator,
 * as our NAS record requires), the `files` module answering each listed MAC
 * with Auth-Type := Accept and two reply attributes, and accounting answered
 * with no module at all (no `detail` file: nothing written per packet).
 * Logging goes to stderr and carries only start-up and errors (auth logging
 * off). Debian's thread pool as shipped; max_requests raised so that replies
 * kept for duplicate detection (cleanup_delay) never make it drop at 30k/s.
 */
export function writeFreeradiusConfig(o: FreeradiusOptions): void {
  for (const sub of ['log', 'run', join('mods-config', 'files')]) mkdirSync(join(o.dir, sub), { recursive: true });
  const q = (s: string): string => JSON.stringify(s); // FreeRADIUS strings take the same escapes for what we put in them
  writeFileSync(join(o.dir, 'radiusd.conf'), `# Written by bench/freeradius.ts for one benchmark run; thrown away after it.
prefix = /usr
exec_prefix = /usr
sysconfdir = /etc
localstatedir = /var
sbindir = \${exec_prefix}/sbin
raddbdir = ${o.dir}
confdir = \${raddbdir}
logdir = \${raddbdir}/log
radacctdir = \${logdir}/radacct
run_dir = \${raddbdir}/run
db_dir = \${raddbdir}
modconfdir = \${confdir}/mods-config
libdir = /usr/lib/freeradius
name = freeradius
pidfile = \${run_dir}/\${name}.pid
max_request_time = 30
cleanup_delay = 5
max_requests = 1048576
hostname_lookups = no
log {
  destination = stderr
  colourise = no
  auth = no
  auth_badpass = no
  auth_goodpass = no
}
security {
  allow_core_dumps = no
  max_attributes = 200
  reject_delay = 0
  status_server = no
}
proxy_requests = no
client bench {
  ipaddr = ${o.host}
  secret = ${q(o.secret)}
  require_message_authenticator = yes
}
thread pool {
  start_servers = 5
  max_servers = 32
  min_spare_servers = 3
  max_spare_servers = 10
  max_requests_per_server = 0
  auto_limit_acct = no
}
modules {
  files {
    filename = \${modconfdir}/files/authorize
  }
  always ok {
    rcode = ok
  }
${o.sql ? sqlModule(o.sql) : ''}}
server default {
  listen {
    type = auth
    ipaddr = ${o.host}
    port = ${o.authPort}
  }
  listen {
    type = acct
    ipaddr = ${o.host}
    port = ${o.acctPort}
  }
  authorize {
    ${o.sql ? 'sql' : 'files'}
  }
  authenticate {
  }
  preacct {
${o.sql ? PREACCT_UNIQUE_ID : ''}  }
  accounting {
    ${o.sql ? 'sql' : 'ok'}
  }
  post-auth {
  }
}
`);
  // radiusd reads ${confdir}/dictionary after the system dictionaries (which define WISPr-*).
  writeFileSync(join(o.dir, 'dictionary'), '');
  const entries = o.macs.map((m) => `${q(m)} Auth-Type := Accept\n\tSession-Timeout = ${o.sessionTimeoutSec},\n\tWISPr-Bandwidth-Max-Down = ${o.bandwidthDownBps}\n`);
  writeFileSync(join(o.dir, 'mods-config', 'files', 'authorize'), entries.join(''));
}

/** Debian's stock PostgreSQL schema and queries for rlm_sql (freeradius-config ships them). */
const DEBIAN_SQL = '/etc/freeradius/3.0/mods-config/sql/main/postgresql';

/**
 * Debian's `sql` module as shipped (mods-available/sql), pointed at PostgreSQL: the stock table names,
 * its connection pool sized from the thread pool, and the stock queries.conf included as is.
 */
function sqlModule(db: PgTarget): string {
  // The stock queries name xlats of Debian's enabled `expr` module (%{tolower:...}, %{md5:...}).
  return `  expr {
  }
  sql {
    dialect = "postgresql"
    driver = "rlm_sql_postgresql"
    server = "${db.host}"
    port = ${db.port}
    login = "${db.user}"
    password = ""
    radius_db = "${db.database}"
    acct_table1 = "radacct"
    acct_table2 = "radacct"
    postauth_table = "radpostauth"
    authcheck_table = "radcheck"
    groupcheck_table = "radgroupcheck"
    authreply_table = "radreply"
    groupreply_table = "radgroupreply"
    usergroup_table = "radusergroup"
    delete_stale_sessions = yes
    postgresql {
      send_application_name = yes
    }
    pool {
      start = \${thread[pool].start_servers}
      min = \${thread[pool].min_spare_servers}
      max = \${thread[pool].max_servers}
      spare = \${thread[pool].max_spare_servers}
      uses = 0
      retry_delay = 30
      lifetime = 0
      idle_timeout = 60
    }
    client_table = "nas"
    group_attribute = "SQL-Group"
    $INCLUDE ${DEBIAN_SQL}/queries.conf
  }
`;
}

/** Debian's default site runs the `acct_unique` policy in preacct; the stock queries key radacct rows on its result. */
const PREACCT_UNIQUE_ID = `    update request {
      &Acct-Unique-Session-Id := "%{md5:%{User-Name},%{Acct-Session-Id},%{NAS-IP-Address},%{NAS-Identifier},%{NAS-Port-ID},%{NAS-Port}}"
    }
`;

/** Puts rlm_sql's PostgreSQL driver in place from Debian's packages when it is missing and we are root. */
export function ensureFreeradiusPostgresql(say: (line: string) => void): void {
  if (existsSync('/usr/lib/freeradius/rlm_sql_postgresql.so')) return;
  if (process.getuid?.() !== 0 || !has('apt-get')) throw new Error('rlm_sql_postgresql is needed (Debian/Ubuntu: sudo apt-get install freeradius-postgresql)');
  say('rlm_sql_postgresql missing: installing freeradius-postgresql from Debian packages (apt-get)...');
  aptGet(['update', '-qq'], ['install', '-y', '-qq', 'freeradius-postgresql']);
}

/**
 * Makes `db.database` with Debian's stock schema and, per MAC, what the `files` configuration says:
 * radcheck Auth-Type := Accept, radreply Session-Timeout and WISPr-Bandwidth-Max-Down. `admin` is a
 * connection to another database of the same server (the new one is created from there).
 */
export async function prepareRadiusDatabase(admin: string, db: PgTarget, o: Pick<FreeradiusOptions, 'macs' | 'sessionTimeoutSec' | 'bandwidthDownBps'>): Promise<void> {
  const run = async (url: string, fn: (c: pg.Client) => Promise<void>): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try { await fn(c); } finally { await c.end(); }
  };
  await run(admin, async (c) => { await c.query(`CREATE DATABASE ${db.database}`); });
  await run(`postgres://${db.user}@${db.host}:${db.port}/${db.database}`, async (c) => {
    await c.query(readFileSync(join(DEBIAN_SQL, 'schema.sql'), 'utf8'));
    await c.query(`INSERT INTO radcheck (username, attribute, op, value) SELECT u, 'Auth-Type', ':=', 'Accept' FROM unnest($1::text[]) u`, [o.macs]);
    await c.query(`INSERT INTO radreply (username, attribute, op, value)
      SELECT u, a, '=', v FROM unnest($1::text[]) u, (VALUES ('Session-Timeout', $2::text), ('WISPr-Bandwidth-Max-Down', $3::text)) r(a, v)`,
    [o.macs, String(o.sessionTimeoutSec), String(o.bandwidthDownBps)]);
  });
}

/** Starts `freeradius -f -d <dir>` (foreground, not -X: its worker threads, no debug output). */
export function spawnFreeradius(dir: string, onLine: (line: string) => void): ChildProcess {
  const child = spawn('freeradius', ['-f', '-d', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let rest = '';
  const feed = (d: Buffer): void => {
    rest += d.toString();
    const lines = rest.split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) if (l.trim()) onLine(l);
  };
  child.stdout!.on('data', feed);
  child.stderr!.on('data', feed);
  return child;
}
