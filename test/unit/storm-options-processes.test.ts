import { describe, expect, it } from 'vitest';
import { parseStormArgs, type StormOptions } from '../../bench/storm-options.js';

const parse = (...argv: string[]): StormOptions => parseStormArgs(argv) as StormOptions;

describe('stadium-storm --processes and --cluster', () => {
  it('takes a number of processes (1 unless given) and the cluster flag', () => {
    expect(parse().processes).toBe(1);
    expect(parse().cluster).toBe(false);
    expect(parse('--processes', '2', '--cluster')).toMatchObject({ processes: 2, cluster: true });
  });

  it('refuses what the bench cannot do with them', () => {
    expect(() => parse('--processes', '0')).toThrow(/--processes must be a number in 1\.\.8/);
    expect(() => parse('--processes', '2', '--stub')).toThrow(/--processes starts the bench's own services/);
    expect(() => parse('--cluster', '--redis-url', 'redis://127.0.0.1:6379', '--database-url', 'postgres://x@127.0.0.1/x'))
      .toThrow(/--cluster starts its own Redis Cluster/);
    expect(() => parse('--cluster', '--stub')).toThrow(/--cluster starts its own Redis Cluster/);
  });
});
