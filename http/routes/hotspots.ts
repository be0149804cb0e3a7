import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { hotspot, hotspotCreate, hotspotList, hotspotUpdate, nasClient, nasClientCreate, nasClientList } from './hotspots.schemas.js';

/** Hotspots (name, location, IANA timezone; see /v1/openapi.json) and their NAS clients. */
export function hotspotRoutes(engine: Engine): Route[] {
  const hs = engine.hotspots;
  return [
    route({
      method: 'get', path: '/v1/hotspots', surface: 'public', auth: true, responseSchema: hotspotList,
      summary: "List the tenant's hotspots",
      handler: async ({ principal }) => ({ status: 200, body: { data: await hs.list(principal.tenant.id) } }),
    }),
    route({
      method: 'post', path: '/v1/hotspots', surface: 'public', auth: true, bodySchema: hotspotCreate, responseSchema: hotspot, status: 201,
      summary: 'Create a hotspot (site)',
      handler: async ({ principal, body }) => ({ status: 201, body: await hs.create(principal.tenant.id, body) }),
      audit: (_ctx, out) => ({ event: 'hotspot_created', details: { name: out.name, timezone: out.timezone }, subject: { hotspot_id: out.id } }),
    }),
    route({
      method: 'get', path: '/v1/hotspots/:id', surface: 'public', auth: true, responseSchema: hotspot,
      summary: 'Read a hotspot', errors: { 404: 'hotspot_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await hs.get(principal.tenant.id, params[0]!) }),
    }),
    route({
      method: 'put', path: '/v1/hotspots/:id', surface: 'public', auth: true, bodySchema: hotspotUpdate, responseSchema: hotspot,
      summary: 'Change any of a hotspot\'s fields', errors: { 404: 'hotspot_not_found' },
      handler: async ({ principal, params, body }) => ({ status: 200, body: await hs.update(principal.tenant.id, params[0]!, body) }),
      audit: ({ body }, out) => ({ event: 'hotspot_updated', details: { changed: body }, subject: { hotspot_id: out.id } }),
    }),
    route({
      method: 'post', path: '/v1/hotspots/:id/nas-clients', surface: 'public', auth: true, bodySchema: nasClientCreate,
      responseSchema: nasClient, status: 201,
      summary: 'Register a NAS (RADIUS client) of the hotspot; the secret is never returned',
      errors: { 404: 'hotspot_not_found', 409: 'nas_ip_in_use, nas_subnet_overlap' },
      handler: async ({ principal, params, body }) => ({ status: 201, body: await hs.addNasClient(principal.tenant.id, params[0]!, body) }),
      audit: (_ctx, out) => ({ event: 'nas_client_added', details: {
        nas_id: out.id, ip: out.ip, coa_port: out.coa_port, nas_identifier: out.nas_identifier, nas_type: out.nas_type,
        reply_role: out.reply_role, reply_filter_id: out.reply_filter_id, reply_vlan: out.reply_vlan, radsec_cert_name: out.radsec_cert_name,
      }, subject: { hotspot_id: out.hotspot_id } }),
    }),
    route({
      method: 'get', path: '/v1/hotspots/:id/nas-clients', surface: 'public', auth: true, responseSchema: nasClientList,
      summary: "List a hotspot's NAS clients", errors: { 404: 'hotspot_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: { data: await hs.listNasClients(principal.tenant.id, params[0]!) } }),
    }),
  ];
}
