/**
 * The Node.js options the service runs with, wherever it is started: the
 * Dockerfile's CMD, the systemd unit's ExecStart and `npm start` spell them
 * out (test/unit/node-options.test.ts holds them equal to this list), and the
 * benches (bench-kit.ts serviceNodeOptions: BENCH_SERVICE_NODE_OPTIONS
 * overrides it for an A/B) and tests that start `dist/scripts/serve.js` as a
 * child pass these.
 *
 * `--experimental-async-context-frame`: AsyncLocalStorage (the request id in
 * every log line of a request, engine/logger.ts) kept in V8's continuation
 * data, as Node 24 does by default, instead of a promise hook on every
 * promise of the process: about 7 % of the service's CPU per portal verify
 * (docs/runtime.md). Node 22 has it from 22.9; from 22.16 its implementation
 * is Node 24's.
 */
export const SERVICE_NODE_OPTIONS: readonly string[] = ['--experimental-async-context-frame'];
