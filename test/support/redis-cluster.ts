// The cluster starter lives in scripts/ so that the storm bench (dist/) can start one too.
export { startRedisCluster, type ClusterNode, type TestCluster } from '../../scripts/redis-cluster.js';
