import { test as base } from 'vitest';
import { keys } from '../../engine/redis/keys.js';
import { slotOf } from '../../engine/redis/redis-client.js';
import { newTenant, type Tenant } from './fixture.js';
import { startRedisCluster, type TestCluster } from './redis-cluster.js';
import { startService, type Running } from './service.js';

/** A tenant of the cluster tests, with the port of the master that holds its keys. */
export interface ClusterTenant extends Tenant {
  master: number;
}

/**
 * The tests on a Redis Cluster: a vitest `test` whose tests may ask for
 *   cluster  a 3-master Redis Cluster started for this file (redis-cluster.ts; `shape`: replicas), stopped after it
 *   svc      the service in this process with REDIS_URL=redis+cluster://... and `env` (one per file)
 *   spread   three fresh tenants whose keys sit on three different masters (per test)
 * Only files that ask for it start a cluster: the global setup does not.
 */
export const clusterServiceTest = (env: Record<string, string> = {}, shape: { replicasPerMaster?: number; nodeTimeoutMs?: number } = {}) => base
  .extend('cluster', { scope: 'file' }, async ({}, { onCleanup }): Promise<TestCluster> => {
    const cluster = await startRedisCluster(shape);
    onCleanup(() => cluster.stop());
    return cluster;
  })
  .extend('svc', { scope: 'file' }, async ({ cluster }, { onCleanup }): Promise<Running> => {
    const svc = await startService({ ...env, REDIS_URL: cluster.url });
    onCleanup(() => svc.stop());
    return svc;
  })
  .extend('spread', async ({ cluster, svc }): Promise<ClusterTenant[]> => spreadTenants(cluster, svc));

/**
 * New tenants until one sits on each master (a tenant's keys share its hash
 * tag, so its slot): random tenant ids land on a given master a third of the
 * time, so a handful of tries is the rule; 60 without all three fails.
 */
export async function spreadTenants(cluster: TestCluster, svc: Running, masters = 3): Promise<ClusterTenant[]> {
  const byMaster = new Map<number, ClusterTenant>();
  for (let i = 0; i < 60 && byMaster.size < masters; i++) {
    const t = await newTenant(svc.service, 'Cluster Venue');
    const master = await cluster.masterOf(slotOf(keys.loaded(t.tenantId)));
    if (!byMaster.has(master)) byMaster.set(master, { ...t, master });
  }
  if (byMaster.size < masters) throw new Error(`tenants landed on ${byMaster.size} of ${masters} masters in 60 tries`);
  return [...byMaster.values()];
}
