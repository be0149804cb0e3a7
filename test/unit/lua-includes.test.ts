import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/util/project-root.js';
import { readScript } from '../../engine/redis/scripts.js';

/** The `--- @include "name"` mechanism of engine/redis/scripts.ts (fragments in lua/includes/). */
describe('Lua includes', () => {
  const dir = (files: Record<string, string>): string => {
    const d = mkdtempSync(join(tmpdir(), 'lua-inc-'));
    mkdirSync(join(d, 'includes'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
    return d;
  };

  it('puts each fragment in where it is first included, nested ones too, and only once', () => {
    const d = dir({
      'main-1.lua': 'local rcall = redis.call\n--- @include "a"\n--- @include "b"\nreturn f()\n',
      'includes/a.lua': '--- @include "c"\nlocal function a() end\n',
      'includes/b.lua': '--- @include "c"\nlocal function b() end\n',
      'includes/c.lua': 'local function c() end\n',
    });
    expect(readScript('main-1.lua', d)).toBe(
      'local rcall = redis.call\nlocal function c() end\n\nlocal function a() end\n\n-- (c included above)\nlocal function b() end\n\nreturn f()\n');
  });

  it('fails naming the script, the include and the missing file', () => {
    const d = dir({ 'main-1.lua': 'local x = 1\n--- @include "nowhere"\n' });
    expect(() => readScript('main-1.lua', d)).toThrow(/main-1\.lua: --- @include "nowhere": no such fragment \(.*includes\/nowhere\.lua\)/);
    const nested = dir({ 'main-1.lua': '--- @include "a"\n', 'includes/a.lua': '--- @include "gone"\n' });
    expect(() => readScript('main-1.lua', nested)).toThrow(/includes\/a\.lua: --- @include "gone"/);
    const bad = dir({ 'main-1.lua': '--- @include "../secret"\n' });
    expect(() => readScript('main-1.lua', bad)).toThrow(/bad include name/);
  });

  it('resolves every script of the service, leaving no include line behind', () => {
    const scripts = readdirSync(projectPath('engine', 'redis', 'lua')).filter((f) => f.endsWith('.lua'));
    expect(scripts.length).toBeGreaterThan(5);
    for (const f of scripts) expect(readScript(f), f).not.toMatch(/^--- @include/m);
    // The session-end record is built in one fragment, which both its users carry.
    for (const f of ['end-session-10.lua', 'use-voucher-18.lua', 'start-session-13.lua', 'use-otp-14.lua']) {
      expect(readScript(f).match(/local function recordSessionEnd/g), f).toHaveLength(1);
      expect(readScript(f).match(/local function emitEvent/g), f).toHaveLength(1);
    }
  });
});
