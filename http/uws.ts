import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

/**
 * The Node.js majors the service runs on, as package.json's `engines` says:
 * LTS lines upstream still supports whose uWebSockets.js binary we have seen
 * load and pass the tests here. Node 20 left upstream support in April 2026.
 * Node 24 waits on glibc 2.38: every registry build of uWS for its ABI (137)
 * needs it, and Debian 12 has 2.36 (docs/runtime.md).
 */
export const SUPPORTED_NODE_MAJORS: readonly number[] = [22];

/**
 * Throws with one line an operator can act on when `version` (a
 * process.version) is not a supported Node.js. Takes the version as an
 * argument so the refusal is testable without running on another Node.
 */
export function checkRuntime(version: string): void {
  const major = Number(/^v(\d+)\./.exec(version)?.[1]);
  if (!SUPPORTED_NODE_MAJORS.includes(major)) {
    throw new Error(
      `Node.js ${version} is not supported: run on Node.js ${SUPPORTED_NODE_MAJORS.join(' or ')} ` +
      '(npm start, npm test and npm run use the Node.js that `npm ci` installs into node_modules/.bin).');
  }
}

/**
 * Loads the native uWebSockets.js addon, and only that.
 *
 * We load the binary by its path ourselves rather than through the package's
 * entry point: a uWS package may fall back to a slow pure-JS server when its
 * binary does not load for this Node ABI (the one we used before did), and we
 * never want that in production. The binary must load, or the service refuses
 * to start.
 */
export function loadUws(): typeof Uws {
  checkRuntime(process.version);
  const require = createRequire(import.meta.url);
  // The package's `exports` does not list package.json: resolve its entry
  // point (uws.js, beside the binaries) instead.
  const pkgDir = dirname(require.resolve('uWebSockets.js'));
  const binary = join(pkgDir, `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  try {
    return require(binary) as typeof Uws;
  } catch (err) {
    throw new Error(
      `uWebSockets.js native binary did not load (${binary}): ${(err as Error).message}. ` +
      `Refusing to start without it (no JavaScript fallback); use Node.js ${SUPPORTED_NODE_MAJORS.join(' or ')} on linux-x64/arm64 (glibc 2.27 or later).`,
      { cause: err });
  }
}
