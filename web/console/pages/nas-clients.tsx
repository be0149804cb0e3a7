import { useState } from 'preact/hooks';
import { NAS_TYPES, api, usePoll, type Hotspot, type NasType } from '../../shared/index.js';
import { Field, OutcomeLine, useAction, useConsole, val } from '../ui.js';

/**
 * A RADIUS shared secret made in the browser: 24 random bytes as base64url
 * (32 characters, inside the 8-128 the API takes). The service never returns
 * a secret, so it is shown once, here, right after the NAS client is added.
 */
function newSecret(): string {
  const b = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...b)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A hotspot's NAS clients: the list and adding one (its secret shown once). */
export function NasClients(props: { hotspot: Hotspot; onClose(): void }): preact.JSX.Element {
  const { t, say } = useConsole();
  const h = props.hotspot;
  const list = usePoll((signal) => api.hotspots.nasClients(h.id, signal), null, [h.id]);
  const act = useAction();
  const [f, setF] = useState({ ip: '', name: '', coa: '3799', ident: '', type: 'generic' as NasType, role: '', filter: '', vlan: '', cert: '' });
  const [shown, setShown] = useState<{ ip: string; secret: string } | null>(null);
  const submit = (e: Event): void => {
    e.preventDefault();
    const secret = newSecret();
    setShown(null);
    void act.run(async () => {
      const n = await api.hotspots.addNasClient(h.id, {
        ip: f.ip.trim(), name: f.name || undefined, coa_port: Number(f.coa) || 3799, nas_identifier: f.ident.trim() || undefined, secret,
        nas_type: f.type, reply_role: f.role.trim() || undefined, reply_filter_id: f.filter.trim() || undefined, reply_vlan: f.vlan ? Number(f.vlan) : undefined,
        radsec_cert_name: f.cert.trim() || undefined,
      });
      setShown({ ip: n.ip, secret });
      list.reload();
      return n.ip;
    }).then((ok) => { if (ok) act.setOutcome(null); });
  };
  const rows = list.data?.data ?? [];
  return (
    <section aria-labelledby="nas-title">
      <h2 id="nas-title">{t('h_nas_title', { name: h.name })}</h2>
      {list.error ? <p class="error-summary" role="alert">{say(list.error)}</p> : null}
      {list.data && rows.length === 0 ? <p>{t('none_yet')}</p> : (
        <table aria-labelledby="nas-title">
          <thead><tr><th scope="col">{t('h_nas_col_ip')}</th><th scope="col">{t('h_nas_col_ident')}</th><th scope="col">{t('h_nas_col_type')}</th><th scope="col">{t('h_nas_col_name')}</th><th scope="col" class="num">{t('h_nas_col_coa')}</th></tr></thead>
          <tbody>{rows.map((n) => <tr key={n.id}><td class="mono">{n.ip}</td><td class="mono">{n.nas_identifier ?? ''}</td><td>{t(`h_nas_type_${n.nas_type}`)}{n.reply_role ? ` · ${n.reply_role}` : ''}{n.reply_vlan ? ` · VLAN ${n.reply_vlan}` : ''}</td><td>{n.name ?? ''}</td><td class="num">{n.coa_port}</td></tr>)}</tbody>
        </table>
      )}
      {shown && (
        <div role="status">
          <p>{t('h_nas_secret_once', { ip: shown.ip })}</p>
          <p class="secret mono" aria-label={t('h_nas_secret_once', { ip: shown.ip })}>{shown.secret}</p>
        </div>
      )}
      <form class="row" onSubmit={submit}>
        <Field id="nas-ip" label={t('h_nas_ip')} hint={t('h_nas_ip_hint')}><input id="nas-ip" class="mono" required aria-describedby="nas-ip-hint" value={f.ip} onInput={(e) => setF({ ...f, ip: val(e) })} /></Field>
        <Field id="nas-type" label={t('h_nas_type')} hint={t('h_nas_type_hint')}>
          <select id="nas-type" aria-describedby="nas-type-hint" value={f.type} onChange={(e) => setF({ ...f, type: val(e) as NasType })}>
            {NAS_TYPES.map((k) => <option key={k} value={k}>{t(`h_nas_type_${k}`)}</option>)}
          </select>
        </Field>
        <Field id="nas-role" label={t('h_nas_role')}><input id="nas-role" class="mono" maxLength={64} value={f.role} onInput={(e) => setF({ ...f, role: val(e) })} /></Field>
        <Field id="nas-filter" label={t('h_nas_filter')}><input id="nas-filter" class="mono" maxLength={64} value={f.filter} onInput={(e) => setF({ ...f, filter: val(e) })} /></Field>
        <Field id="nas-vlan" label={t('h_nas_vlan')}><input id="nas-vlan" type="number" min={1} max={4094} value={f.vlan} onInput={(e) => setF({ ...f, vlan: val(e) })} /></Field>
        <Field id="nas-ident" label={t('h_nas_ident')} hint={t('h_nas_ident_hint')}><input id="nas-ident" class="mono" size={36} maxLength={253} value={f.ident} onInput={(e) => setF({ ...f, ident: val(e) })} /></Field>
        <Field id="nas-cert" label={t('h_nas_cert')} hint={t('h_nas_cert_hint')}><input id="nas-cert" class="mono" size={36} maxLength={253} aria-describedby="nas-cert-hint" value={f.cert} onInput={(e) => setF({ ...f, cert: val(e) })} /></Field>
        <Field id="nas-name" label={t('h_nas_name')}><input id="nas-name" value={f.name} onInput={(e) => setF({ ...f, name: val(e) })} /></Field>
        <Field id="nas-coa" label={t('h_nas_coa')}><input id="nas-coa" type="number" min={1} max={65535} value={f.coa} onInput={(e) => setF({ ...f, coa: val(e) })} /></Field>
        <button type="submit" disabled={act.busy}>{t('h_nas_add')}</button>
        <button type="button" class="secondary" onClick={props.onClose}>{t('h_close')}</button>
      </form>
      <OutcomeLine outcome={act.outcome} />
    </section>
  );
}
