import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, waitFor } from './local-services.js';

const run = promisify(execFile);

/** One redis-server of a test cluster. */
export interface ClusterNode {
  port: number;
  /** The cluster bus port (cluster-port; not port + 10000, which may be taken or past 65535). */
  busPort: number;
  child: ChildProcess;
}

/**
 * A Redis Cluster on loopback, started by a test file for itself (never by the
 * global setup; test/support/redis-cluster.ts), or by the storm bench (--cluster).
 */
export interface TestCluster {
  /** REDIS_URL for the engine: `redis+cluster://127.0.0.1:<port>,...` (every master as a seed). */
  url: string;
  nodes: ClusterNode[];
  /** How long starting it took (ms): the cost each file that asks for one pays. */
  startMs: number;
  /** A plain connection to one node (the test closes it). */
  node(port: number): Redis;
  /** The port of the master that serves `slot`. */
  masterOf(slot: number): Promise<number>;
  /** Stops every node and removes their folders. */
  stop(): Promise<void>;
}

/**
 * Starts a Redis Cluster of `masters` masters (3, the least redis-cli accepts)
 * and `replicasPerMaster` replicas each, on free loopback ports, one folder per
 * node under a temporary folder: redis-server --cluster-enabled yes per node,
 * then `redis-cli --cluster create ... --cluster-yes`, then waits until every
 * node says cluster_state:ok. No persistence unless `aof` (a test cluster
 * lives for one file; the storm bench asks for the AOF, `appendfsync
 * everysec`, so that a shard's CPU is what the stack's Redis pays for the
 * same work). Stop it in the file's cleanup. `nodeTimeoutMs` is the nodes'
 * cluster-node-timeout (2 s unless given).
 */
export async function startRedisCluster(opts: { masters?: number; replicasPerMaster?: number; nodeTimeoutMs?: number; aof?: boolean } = {}): Promise<TestCluster> {
  const masters = opts.masters ?? 3;
  // cluster-node-timeout: how long a master may be unreachable before the others call it failed and a
  // replica is elected (an unplanned fail-over takes about this plus the election's 0.5-1 s).
  const nodeTimeout = String(opts.nodeTimeoutMs ?? 2000);
  const replicas = opts.replicasPerMaster ?? 0;
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'gw-cluster-'));
  const nodes: ClusterNode[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => new Promise<void>((resolve) => {
      if (n.child.exitCode !== null || n.child.signalCode !== null) return resolve();
      n.child.once('exit', () => resolve());
      n.child.kill('SIGKILL');
    })));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // A port free a moment ago may be another process's by the time redis-server binds it (freePort
    // keeps clear of the kernel's ephemeral ports, but another test may bind the same one): a node
    // that exits before it answers is started again on other ports, rather than waited for until the time-out.
    const startNode = async (): Promise<ClusterNode> => {
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        let busPort = await freePort();
        while (busPort === port) busPort = await freePort();
        const nodeDir = join(dir, String(port));
        mkdirSync(nodeDir, { recursive: true });
        const child = spawn('redis-server', [
          '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-port', String(busPort),
          '--cluster-config-file', join(nodeDir, 'nodes.conf'), '--cluster-node-timeout', nodeTimeout, '--dir', nodeDir,
          '--save', '', '--protected-mode', 'no', ...(opts.aof ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no']),
        ], { stdio: 'ignore' });
        const node = { port, busPort, child };
        nodes.push(node);
        const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
        // Ours answering, not another test's redis-server that took the port first.
        const ours = async (): Promise<boolean> => (await redisCli(port, 'INFO', 'server')).includes(`process_id:${child.pid}\r`);
        await waitFor(async () => exited() || (await ours()), `redis-server on ${port} answering`, 20_000);
        if (!exited()) return node;
        nodes.splice(nodes.indexOf(node), 1);
        if (attempt === 5) throw new Error(`redis-server exited before answering, five times (ports taken?); last on ${port}`);
      }
    };
    for (let i = 0; i < masters * (1 + replicas); i++) await startNode();
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 });
    for (const n of nodes) {
      await waitFor(() => clusterOk(n.port), `cluster_state:ok on ${n.port}`, 30_000);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const masterPorts = nodes.slice(0, masters).map((n) => n.port);
  return {
    url: `redis+cluster://${masterPorts.map((p) => `127.0.0.1:${p}`).join(',')}`,
    nodes,
    startMs: Date.now() - started,
    node: (port) => new Redis(port, '127.0.0.1', { lazyConnect: false, maxRetriesPerRequest: 1 }),
    masterOf: async (slot) => {
      const r = new Redis(nodes[0]!.port, '127.0.0.1');
      try {
        const ranges = (await r.cluster('SLOTS')) as unknown as [number, number, [string, number, ...unknown[]], ...unknown[]][];
        const hit = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (!hit) throw new Error(`no master serves slot ${slot}`);
        return hit[2][1];
      } finally {
        r.disconnect();
      }
    },
    stop,
  };
}

async function redisCli(port: number, ...args: string[]): Promise<string> {
  try {
    return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 })).stdout;
  } catch {
    return '';
  }
}

async function clusterOk(port: number): Promise<boolean> {
  return (await redisCli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok');
}
