import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DASHBOARD_MODULES, DEFAULT_MODULES, signOperatorToken } from '../engine/index.js';
import { withLocalDefaults } from './local-services.js';
import { fail, runService, stopOnSignals } from './serve.js';

/**
 * `npm start`: the service with working defaults on a new machine. Starts
 * local Redis and PostgreSQL under .data/ unless REDIS_URL / DATABASE_URL are
 * set, makes a JWT secret if none is given, creates a demo tenant on first
 * run, and prints how to call the API.
 */
async function main(): Promise<void> {
  const say = (line: string): void => { process.stdout.write(line + '\n'); };
  const { env, dataDir } = await withLocalDefaults(process.env, say);
  // Sponsors open their approve and reject links here: on this machine, the portal's own address.
  const portalPort = env.PORTAL_PORT || env.HTTP_PORT || '8080';
  if (!env.PORTAL_PUBLIC_URL && portalPort !== '0') {
    env.PORTAL_PUBLIC_URL = `http://127.0.0.1:${portalPort}`;
    say(`PORTAL_PUBLIC_URL not set: sponsors' links point at ${env.PORTAL_PUBLIC_URL} (this machine only)`);
  }

  const service = await runService(env);
  stopOnSignals(service);
  const { engine } = service;

  // The demo tenant's key is kept in .data/demo.json so every start can print it.
  const demoFile = join(dataDir, 'demo.json');
  let demo: { tenant_id: string; api_key: string; hotspot_id: string } | undefined;
  if (existsSync(demoFile)) demo = JSON.parse(readFileSync(demoFile, 'utf8'));
  if (!demo || !(await engine.tenants.get(demo.tenant_id))) {
    // Licensed for the dashboard too, so every page can be tried.
    const tenant = await engine.tenants.create('Demo Venue', [...DEFAULT_MODULES, DASHBOARD_MODULES[0]]);
    const { apiKey } = await engine.tenants.createApiKey(tenant.id, 'demo');
    const hotspot = await engine.hotspots.create(tenant.id, { name: 'Demo Lobby', location: 'Main entrance', timezone: 'Europe/Istanbul' });
    demo = { tenant_id: tenant.id, api_key: apiKey, hotspot_id: hotspot.id };
    writeFileSync(demoFile, JSON.stringify(demo, null, 2), { mode: 0o600 });
  }
  const jwt = await signOperatorToken(engine.config.jwtSecret, demo.tenant_id, ['admin'], 3600, 'demo');
  const base = `http://127.0.0.1:${service.http.ports.main ?? engine.config.httpPort}`;
  const page = (surface: 'console' | 'dashboard'): string => {
    const own = service.http.ports[surface];
    return own === undefined ? `${base}/${surface}` : `http://127.0.0.1:${own}/`;
  };
  say('');
  say('Guest Wi-Fi engine is running.');
  say(`  API base URL   ${base}/v1   (OpenAPI: ${base}/v1/openapi.json)`);
  say(`  portal page    ${base}/portal?hotspot_id=${demo.hotspot_id}&mac=AA:BB:CC:DD:EE:01&lang=en   (a guest's phone; sign in with the voucher below)`);
  say(`  console        ${page('console')}   (operators: sign in with the API key below)`);
  say(`  dashboard      ${page('dashboard')}   (the operations dashboard; same sign-in)`);
  say(`  demo tenant    ${demo.tenant_id}`);
  say(`  demo hotspot   ${demo.hotspot_id}`);
  say(`  API key        ${demo.api_key}`);
  say(`  JWT (1 hour)   ${jwt}`);
  say('');
  say('Try:');
  say(`  curl -s -X POST ${base}/v1/vouchers -H 'X-API-Key: ${demo.api_key}' -H 'content-type: application/json' -d '{"code":"WELCOME1","max_uses":5}'`);
  say(`  curl -s -X POST '${base}/api/v1/hotspot-portal/voucher/verify?hotspot_id=${demo.hotspot_id}' -H 'content-type: application/json' -d '{"code":"WELCOME1","mac":"AA:BB:CC:DD:EE:02","ip":"10.0.0.5"}'`);
  say('  then open the portal page above and enter WELCOME1 (the page works without JavaScript too).');
}

main().catch(fail);
