import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * The browser of the portal's end-to-end tests: Debian's Chromium driven by
 * playwright-core, never a browser playwright downloads, at a phone's
 * 360 x 740 viewport with a fresh profile per launch, as a captive-network
 * mini-browser opens the page with no saved state.
 */

export const CHROMIUM = '/usr/bin/chromium';
/** Where page screenshots go (kept as test artefacts; test-artifacts/ is git-ignored). */
export const SHOTS = join('test-artifacts', 'portal');
export const PHONE_VIEWPORT = { width: 360, height: 740 } as const;

/**
 * Throws (never skips) when the browser is absent: a missing browser must fail
 * the run, not pass it with the browser tests silently left out.
 */
export function requireChromium(executable = CHROMIUM): void {
  if (!existsSync(executable)) {
    throw new Error(`${executable} is missing: install Debian's chromium package (apt-get install chromium); these tests never download a browser`);
  }
  mkdirSync(SHOTS, { recursive: true });
}

export interface PhoneBrowser {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Chromium at the phone viewport, on a throw-away profile; `executable` may be a wrapper (e.g. one entering a network namespace). */
export async function launchPhone(opts: { javaScriptEnabled?: boolean; executable?: string } = {}): Promise<PhoneBrowser> {
  return launch(PHONE_VIEWPORT, opts);
}

/** An operator's laptop: the console's screenshots are taken at this size. */
export const DESKTOP_VIEWPORT = { width: 1440, height: 900 } as const;

/** Chromium at a desktop viewport (1440 x 900 unless given), on a throw-away profile. */
export async function launchDesktop(viewport: { width: number; height: number } = DESKTOP_VIEWPORT): Promise<PhoneBrowser> {
  return launch(viewport, {});
}

async function launch(viewport: { width: number; height: number }, opts: { javaScriptEnabled?: boolean; executable?: string }): Promise<PhoneBrowser> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(dir, {
      executablePath: opts.executable ?? CHROMIUM, headless: true, javaScriptEnabled: opts.javaScriptEnabled ?? true, viewport,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
    return {
      context,
      close: async () => {
        await context.close().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** A full-page screenshot saved as SHOTS/<name>.png. */
export function shot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
