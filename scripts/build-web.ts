import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { brotliCompressSync, constants as zc, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
// The root finder alone: the engine's barrel would load Redis and Postgres clients into a build step.
import { projectPath } from '../engine/util/project-root.js';

/**
 * Builds the operator console and the dashboard (web/<app>/main.tsx) into
 * dist/web/<app>/: index.html plus content-hashed, minified assets under
 * assets/, each with a .gz and a .br beside it. Compressing here, once and at
 * the highest levels, costs the server nothing per request (http/routes/web-app.ts
 * only picks the file). Type-checking web/ is `tsc -p web/tsconfig.json`,
 * run by `npm run build` before this.
 */

/** The single-page apps; each is served at /<app> (http/routes/web-app.ts). */
export const WEB_APPS = ['console', 'dashboard'] as const;
export type WebApp = (typeof WEB_APPS)[number];

const TITLES: Record<WebApp, string> = { console: 'Guest Wi-Fi console', dashboard: 'Guest Wi-Fi dashboard' };

function precompress(file: string): void {
  const data = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
  writeFileSync(`${file}.br`, brotliCompressSync(data, { params: { [zc.BROTLI_PARAM_QUALITY]: 11, [zc.BROTLI_PARAM_SIZE_HINT]: data.length } }));
}

async function buildApp(app: WebApp): Promise<string[]> {
  const out = projectPath('dist', 'web', app);
  rmSync(out, { recursive: true, force: true });
  const assets = join(out, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: { main: projectPath('web', app, 'main.tsx') },
    absWorkingDir: projectPath(), bundle: true, minify: true, format: 'esm', target: ['es2020'], platform: 'browser',
    outdir: assets, entryNames: '[name]-[hash]', assetNames: '[name]-[hash]',
    jsx: 'automatic', jsxImportSource: 'preact', legalComments: 'none', metafile: true, logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const files = Object.keys(result.metafile.outputs).map((f) => projectPath(f));
  const url = (ext: string): string => {
    const f = files.find((x) => x.endsWith(ext));
    if (!f) throw new Error(`${app}: esbuild wrote no ${ext} file`);
    return `/${app}/assets/${basename(f)}`;
  };
  const css = files.some((f) => f.endsWith('.css')) ? `<link rel="stylesheet" href="${url('.css')}">` : '';
  // The language is set by the app once it has read the operator's choice; the page is empty until the script runs.
  const html = '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    + '<meta name="viewport" content="width=device-width, initial-scale=1">'
    + `<title>${TITLES[app]}</title>${css}<script type="module" src="${url('.js')}"></script>`
    + '</head><body><div id="app"></div><noscript>This page needs JavaScript. / Bu sayfa JavaScript gerektirir.</noscript></body></html>';
  const index = join(out, 'index.html');
  writeFileSync(index, html);
  for (const f of [index, ...files.filter((x) => !x.endsWith('.map'))]) precompress(f);
  return files;
}

async function main(): Promise<void> {
  for (const app of WEB_APPS) {
    const files = await buildApp(app);
    process.stdout.write(`web: ${app}: ${files.map((f) => basename(f)).join(', ')}\n`);
  }
}

await main();
