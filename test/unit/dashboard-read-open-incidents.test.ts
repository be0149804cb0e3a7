import { describe, expect, it } from 'vitest';
import { OPEN_INCIDENTS_CACHE_MS, OpenIncidents } from '../../engine/views/open-incidents.js';

/** OpenIncidents: one query per tenant per window, every tenant its own answer, a failed query not kept. */
describe('open incidents for the dashboard', () => {
  const setup = () => {
    let clock = 1_000_000;
    const calls: string[] = [];
    const open = new Map<string, (string | null)[]>([['tn_a', ['hs_1', null, 'hs_1']], ['tn_b', []]]);
    let fail = false;
    const source = {
      openSiteIds: async (t: string) => {
        calls.push(t);
        if (fail) throw new Error('postgres away');
        return [...(open.get(t) ?? [])];
      },
    };
    return { oi: new OpenIncidents(source, () => clock), calls, open, tick: (ms: number) => { clock += ms; }, setFail: (f: boolean) => { fail = f; } };
  };

  it('counts every open incident, and the sites that have one, per tenant', async () => {
    const { oi } = setup();
    expect(await oi.openIncidents('tn_a')).toBe(3);
    expect([...await oi.openIncidentSites('tn_a')]).toEqual(['hs_1']);
    expect(await oi.openIncidents('tn_b')).toBe(0);
    expect((await oi.openIncidentSites('tn_b')).size).toBe(0);
  });

  it('asks once per tenant within the window, again after it, so a change shows within OPEN_INCIDENTS_CACHE_MS', async () => {
    const { oi, calls, open, tick } = setup();
    await Promise.all([oi.openIncidents('tn_a'), oi.openIncidents('tn_a'), oi.openIncidentSites('tn_a')]);
    expect(calls).toEqual(['tn_a']);
    open.set('tn_a', []);
    tick(OPEN_INCIDENTS_CACHE_MS - 1);
    expect(await oi.openIncidents('tn_a')).toBe(3);
    tick(1);
    expect(await oi.openIncidents('tn_a')).toBe(0);
    expect(calls).toEqual(['tn_a', 'tn_a']);
  });

  it('a failed query is not kept: the next request asks again', async () => {
    const { oi, calls, setFail } = setup();
    setFail(true);
    await expect(oi.openIncidents('tn_a')).rejects.toThrow(/postgres away/);
    setFail(false);
    expect(await oi.openIncidents('tn_a')).toBe(3);
    expect(calls).toEqual(['tn_a', 'tn_a']);
  });
});
