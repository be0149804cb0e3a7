import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * compose.yaml (the one-host trial of docs/install.md). Docker Hub, where its
 * Redis and PostgreSQL images come from, is not reachable here, so it is not
 * run: this checks that it parses and wires what the service needs.
 */
const root = join(import.meta.dirname, '..', '..');
const compose = parse(readFileSync(join(root, 'compose.yaml'), 'utf8')) as { services: Record<string, any> };

describe('compose.yaml', () => {
  it('runs the image built from the Dockerfile once Redis and PostgreSQL are healthy, with the required settings', () => {
    const svc = compose.services.guestwifi;
    expect(svc.build).toBe('.');
    expect(svc.depends_on).toEqual({ redis: { condition: 'service_healthy' }, postgres: { condition: 'service_healthy' } });
    expect(Object.keys(svc.environment)).toEqual(expect.arrayContaining(['REDIS_URL', 'DATABASE_URL', 'JWT_SECRET', 'SECRETS_KEY']));
    expect(svc.environment.REDIS_URL).toBe('redis://redis:6379');
    expect(svc.environment.DATABASE_URL).toMatch(/^postgres:\/\/guestwifi:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/guestwifi$/);
    expect(svc.ports).toEqual(expect.arrayContaining(['8080:8080/tcp', '1812:1812/udp', '1813:1813/udp']));
  });

  it('Redis keeps an append-only file, fsynced every second; both stores have health checks and volumes', () => {
    expect(compose.services.redis.command.join(' ')).toContain('--appendonly yes --appendfsync everysec');
    for (const name of ['redis', 'postgres']) {
      expect(compose.services[name].healthcheck.test.length).toBeGreaterThan(1);
      expect(compose.services[name].volumes).toHaveLength(1);
    }
  });
});
