import { createRequire } from 'node:module';
import type * as Uws from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

/**
 * Loads the native uWebSockets.js addon, and only that.
 *
 * The package we install (@trufflesuite/uws-js-unofficial, aliased to
 * uWebSockets.js) quietly falls back to a slow pure-JS server when its binary
 * does not load for this Node ABI. We never want that in production: we load
 * the binary by its path ourselves and refuse to start when it fails.
 */
export function loadUws(): typeof Uws {
  const require = createRequire(import.meta.url);
  const pkgDir = require.resolve('uWebSockets.js/package.json').replace(/package\.json$/, '');
  const binary = `${pkgDir}binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    return require(binary) as typeof Uws;
  } catch (err) {
    throw new Error(
      `uWebSockets.js native binary did not load (${binary}): ${(err as Error).message}. ` +
      'Refusing to start on the slow JavaScript fallback; use Node.js 20 (ABI 115) on linux-x64/arm64.',
      { cause: err });
  }
}
