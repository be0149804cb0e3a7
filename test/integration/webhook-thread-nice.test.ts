import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../engine/index.js';
import { spawnService, testEnv, until } from '../support/fixture.js';

/**
 * WEBHOOK_THREAD_NICE lowers the webhook dispatcher thread's CPU priority
 * and only its: the service's main thread (the sign-ins, the API, RADIUS)
 * keeps the process's. Read from /proc (Linux keeps a nice value per thread).
 */
function nices(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after "(comm) ": state is the 3rd field, nice the 19th.
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch { /* the thread ended meanwhile */ }
  }
  return out;
}

describe('WEBHOOK_THREAD_NICE', () => {
  it('is validated: 0-19, default 0', () => {
    const env = testEnv();
    expect(loadConfig(env).webhooks.threadNice).toBe(0);
    expect(loadConfig({ ...env, WEBHOOK_THREAD_NICE: '10' }).webhooks.threadNice).toBe(10);
    for (const bad of ['20', '-1', 'low']) expect(() => loadConfig({ ...env, WEBHOOK_THREAD_NICE: bad }), bad).toThrow(ConfigError);
  });

  it.skipIf(process.platform !== 'linux')('gives the dispatcher thread the nice value and leaves the main thread as it was (Linux: a priority per thread)', async () => {
    const svc = await spawnService({ ...process.env, ...testEnv({ WEBHOOK_THREAD_NICE: '7' }) });
    try {
      const pid = svc.child.pid!;
      const mainNice = nices(pid).get(pid);
      // The thread is started with the engine; its nice value is set as its first act.
      await until(() => [...nices(pid)].some(([tid, n]) => tid !== pid && n === 7), { what: 'a thread at nice 7' });
      expect(nices(pid).get(pid)).toBe(mainNice);
      expect(mainNice).not.toBe(7);
      expect([...nices(pid).values()].filter((n) => n === 7).length).toBe(1);
    } finally {
      await svc.stop();
    }
  });
});
