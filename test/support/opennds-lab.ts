import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real openNDS gateway between a guest and our service, in network
 * namespaces this test makes and removes:
 *
 *   root namespace (our service, the "internet" on :80)  198.18.N.1
 *        | veth
 *   gateway namespace: openNDS (FAS level 1 to our portal), dnsmasq (DHCP)  198.18.N.2 / 198.18.M.1
 *        | veth
 *   guest namespace: a DHCP client, then curl or Chromium                  198.18.M.x (leased)
 *
 * Addresses are in 198.18.0.0/15 (RFC 2544, for test benches) and exist only
 * on these veths. Files openNDS and the DHCP client would change on the host
 * (/etc/hosts, /etc/dnsmasq.conf, /etc/resolv.conf) are replaced per namespace
 * through /etc/netns/<name>/, which `ip netns exec` mounts over /etc; the DHCP
 * client runs with a script of ours that only sets the address and route.
 * openNDS 9 on Debian needs the legacy iptables: a PATH folder of ours points
 * the names at the -legacy binaries, for openNDS only.
 */
export interface OpenNdsLab {
  /** Our service as the gateway and guest reach it. */
  hostAddress: string;
  /** The guest's leased address and its MAC. */
  guestIp: string;
  guestMac: string;
  /** openNDS's own address and port on the guest side. */
  gatewayAddress: string;
  /** Runs a command in the guest namespace and returns its stdout (asynchronously: servers in this process keep answering). */
  guest(cmd: string, args: string[], timeoutMs?: number): Promise<string>;
  /** A script that starts Debian's Chromium inside the guest namespace (for playwright-core's executablePath). */
  guestChromium: string;
  stop(): Promise<void>;
}

export interface OpenNdsLabOptions {
  /** The port our service listens on (0.0.0.0), used as openNDS's FAS port. */
  servicePort: number;
  /** openNDS's gatewayname: our portal takes the hotspot from it. */
  gatewayName: string;
  /** FAS level 1 key (the hotspot's gateway secret). */
  fasKey: string;
  /** Path of the portal on our service. */
  fasPath?: string;
}

const run = promisify(execFile);
const sh = (cmd: string, args: string[], timeout = 20_000): string => execFileSync(cmd, args, { encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });

/** Installs the Debian packages the lab needs when one is missing (as root, like the rest of the test set-up). */
export function ensureLabPackages(): void {
  const need: Record<string, string> = { opennds: 'opennds', dnsmasq: 'dnsmasq', dhclient: 'isc-dhcp-client', 'iptables-legacy': 'iptables', ip: 'iproute2', curl: 'curl' };
  const missing = Object.entries(need).filter(([bin]) => {
    try { sh('sh', ['-c', `command -v ${bin}`]); return false; } catch { return true; }
  }).map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  sh('apt-get', ['update', '-qq'], 300_000);
  sh('apt-get', ['install', '-y', '-qq', ...new Set(missing)], 600_000);
}

export async function startOpenNdsLab(o: OpenNdsLabOptions): Promise<OpenNdsLab> {
  ensureLabPackages();
  const id = randomBytes(3).toString('hex');
  const gw = `gw${id}`, guestNs = `gu${id}`;
  // Two /24s from 198.18.0.0/15 chosen per run, so two runs on one machine do not meet.
  const a = 1 + (randomBytes(1)[0]! % 120) * 2, b = a + 1;
  const host = `198.18.${a}.1`, gwWan = `198.18.${a}.2`, gwLan = `198.18.${b}.1`;
  const dir = mkdtempSync(join(tmpdir(), 'opennds-lab-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const t of ['iptables', 'iptables-save', 'iptables-restore', 'ip6tables', 'ip6tables-save', 'ip6tables-restore']) {
    symlinkSync(`/usr/sbin/${t.replace('tables', 'tables-legacy')}`, join(bin, t));
  }
  const children: ChildProcess[] = [];
  const cleanups: (() => void)[] = [];
  const ns = (name: string, args: string[], timeout?: number): string => sh('ip', ['netns', 'exec', name, ...args], timeout);
  const stop = async (): Promise<void> => {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    for (const c of children) c.kill('SIGKILL');
    for (const f of cleanups.reverse()) { try { f(); } catch { /* best effort */ } }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const n of [gw, guestNs]) {
      sh('ip', ['netns', 'add', n]);
      cleanups.push(() => sh('ip', ['netns', 'del', n]));
      mkdirSync(`/etc/netns/${n}`, { recursive: true });
      cleanups.push(() => rmSync(`/etc/netns/${n}`, { recursive: true, force: true }));
    }
    copyFileSync('/etc/hosts', `/etc/netns/${gw}/hosts`);
    if (existsSync('/etc/dnsmasq.conf')) writeFileSync(`/etc/netns/${gw}/dnsmasq.conf`, '# the lab gateway\n');
    writeFileSync(`/etc/netns/${gw}/resolv.conf`, 'nameserver 127.0.0.1\n');
    writeFileSync(`/etc/netns/${guestNs}/resolv.conf`, `nameserver ${gwLan}\n`);

    const wan0 = `w0${id}`, wan1 = `w1${id}`, lan0 = `l0${id}`, lan1 = `l1${id}`;
    sh('ip', ['link', 'add', wan0, 'type', 'veth', 'peer', 'name', wan1]);
    cleanups.push(() => sh('ip', ['link', 'del', wan0]));
    sh('ip', ['link', 'set', wan1, 'netns', gw]);
    sh('ip', ['link', 'add', lan0, 'type', 'veth', 'peer', 'name', lan1]);
    sh('ip', ['link', 'set', lan0, 'netns', gw]);
    sh('ip', ['link', 'set', lan1, 'netns', guestNs]);
    sh('ip', ['addr', 'add', `${host}/24`, 'dev', wan0]);
    sh('ip', ['link', 'set', wan0, 'up']);
    sh('ip', ['route', 'add', `198.18.${b}.0/24`, 'via', gwWan]);
    ns(gw, ['ip', 'addr', 'add', `${gwWan}/24`, 'dev', wan1]);
    ns(gw, ['ip', 'addr', 'add', `${gwLan}/24`, 'dev', lan0]);
    for (const l of ['lo', wan1, lan0]) ns(gw, ['ip', 'link', 'set', l, 'up']);
    ns(gw, ['ip', 'route', 'add', 'default', 'via', host]);
    ns(gw, ['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    for (const l of ['lo', lan1]) ns(guestNs, ['ip', 'link', 'set', l, 'up']);

    // The leases file must be one openNDS's dhcp check reads (libopennds.sh): /tmp/dhcp.leases.
    const leases = '/tmp/dhcp.leases';
    writeFileSync(join(dir, 'dnsmasq.conf'), [
      `interface=${lan0}`, 'bind-interfaces', 'port=0', 'no-resolv',
      `dhcp-range=198.18.${b}.10,198.18.${b}.50,255.255.255.0,1h`, `dhcp-option=3,${gwLan}`,
      `dhcp-leasefile=${leases}`, `pid-file=${join(dir, 'dnsmasq.pid')}`,
    ].join('\n') + '\n');
    cleanups.push(() => rmSync(leases, { force: true }));
    children.push(spawn('ip', ['netns', 'exec', gw, 'dnsmasq', '-k', '-C', join(dir, 'dnsmasq.conf')], { stdio: 'ignore' }));

    const dhScript = join(dir, 'dhclient-script');
    writeFileSync(dhScript, `#!/bin/sh
case "$reason" in
  BOUND|RENEW|REBIND|REBOOT)
    ip addr flush dev "$interface"
    ip addr add "$new_ip_address/24" dev "$interface"
    for r in $new_routers; do ip route replace default via "$r" dev "$interface"; done ;;
esac
exit 0
`);
    chmodSync(dhScript, 0o755);
    await new Promise((r) => setTimeout(r, 300));
    ns(guestNs, ['dhclient', '-1', '-sf', dhScript, '-pf', join(dir, 'dhclient.pid'), '-lf', join(dir, 'dhclient.leases'), lan1], 30_000);
    const guestIp = /inet (198\.18\.\d+\.\d+)\//.exec(ns(guestNs, ['ip', '-4', 'addr', 'show', lan1]))?.[1];
    const guestMac = /link\/ether ([0-9a-f:]{17})/.exec(ns(guestNs, ['ip', 'link', 'show', lan1]))?.[1];
    if (!guestIp || !guestMac) throw new Error('the guest got no DHCP lease');
    cleanups.push(() => { try { sh('kill', [sh('cat', [join(dir, 'dhclient.pid')]).trim()]); } catch { /* gone */ } });

    writeFileSync(join(dir, 'opennds.conf'), [
      `GatewayInterface ${lan0}`, `gatewayname ${o.gatewayName}`, 'gatewayport 2050', 'gatewayfqdn disable',
      `fasport ${o.servicePort}`, `fasremoteip ${host}`, `faspath ${o.fasPath ?? '/portal/'}`,
      'fas_secure_enabled 1', `faskey ${o.fasKey}`, 'debuglevel 1', 'checkinterval 5',
      'FirewallRuleSet users-to-router {', '  FirewallRule allow udp port 53', '  FirewallRule allow udp port 67',
      '  FirewallRule allow tcp port 2050', '}',
    ].join('\n') + '\n');
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    const nds = spawn('ip', ['netns', 'exec', gw, 'opennds', '-f', '-c', join(dir, 'opennds.conf')], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    nds.stdout.on('data', (d: Buffer) => { log += d.toString('latin1'); });
    nds.stderr.on('data', (d: Buffer) => { log += d.toString('latin1'); });
    children.unshift(nds);
    const deadline = Date.now() + 20_000;
    while (!log.includes('openNDS is now running')) {
      if (nds.exitCode !== null || Date.now() > deadline) throw new Error(`openNDS did not start:\n${log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    const guestChromium = join(dir, 'guest-chromium');
    writeFileSync(guestChromium, `#!/bin/sh\nexec ip netns exec ${guestNs} /usr/bin/chromium "$@"\n`);
    chmodSync(guestChromium, 0o755);
    return {
      hostAddress: host, guestIp, guestMac, gatewayAddress: `${gwLan}:2050`, guestChromium, stop,
      guest: async (cmd, args, timeoutMs = 20_000) =>
        (await run('ip', ['netns', 'exec', guestNs, cmd, ...args], { encoding: 'utf8', timeout: timeoutMs })).stdout,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
