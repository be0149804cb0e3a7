import { useEffect, useState } from 'preact/hooks';
import { api, usePoll, type SignInSettings } from '../../shared/index.js';
import { Field, OutcomeLine, useAction, useConsole } from '../ui.js';

/** The methods `methods` offers; sponsor approval has a switch of its own (sponsor.enabled), room sign-in a hotspot's PMS link. */
const METHODS = ['voucher', 'sms_otp', 'msgapp_otp', 'email'] as const;

/** A comma- or space-separated list as the API takes it: trimmed, empty entries left out. */
const listOf = (text: string): string[] => text.split(/[\s,]+/).map((x) => x.trim()).filter(Boolean);

/**
 * The tenant's sign-in settings: which methods guests are offered, sponsor
 * approval and who may sponsor, the messaging-app SMS fallback, and the pause
 * between two codes. The whole document is read and written back (PUT
 * replaces it), so the parts this page does not show (senders, prefixes,
 * per-method sessions) are kept as they are.
 */
export function SignInSettingsPage(): preact.JSX.Element {
  const { t, say } = useConsole();
  const current = usePoll((signal) => api.signInSettings.get(signal), null);
  const [doc, setDoc] = useState<SignInSettings | null>(null);
  const act = useAction();
  useEffect(() => { if (current.data) setDoc(current.data); }, [current.data]);

  if (current.error && !doc) return <><h1>{t('s_title')}</h1><p class="error-summary" role="alert">{say(current.error)}</p></>;
  if (!doc) return <h1>{t('s_title')}</h1>;
  const toggle = (m: string, on: boolean): void => setDoc({ ...doc, methods: on ? [...doc.methods, m] : doc.methods.filter((x) => x !== m) });
  const num = (e: Event): number => Number((e.target as HTMLInputElement).value);
  const sponsor = doc.sponsor ?? {};
  const setSponsor = (patch: Partial<NonNullable<SignInSettings['sponsor']>>): void => setDoc({ ...doc, sponsor: { ...sponsor, ...patch } });
  const text = (e: Event): string => (e.target as HTMLInputElement).value;
  return (
    <>
      <h1>{t('s_title')}</h1>
      <form onSubmit={(e) => { e.preventDefault(); void act.run(async () => { setDoc(await api.signInSettings.put(doc)); return t('s_saved'); }); }}>
        <fieldset>
          <legend>{t('s_methods')}</legend>
          {METHODS.map((m) => (
            <label class="inline" key={m}>
              <input type="checkbox" checked={doc.methods.includes(m)} onChange={(e) => toggle(m, (e.target as HTMLInputElement).checked)} /> {t(`s_method_${m}`)}
            </label>
          ))}
          <label class="inline">
            <input type="checkbox" checked={sponsor.enabled === true} onChange={(e) => setSponsor({ enabled: (e.target as HTMLInputElement).checked })} /> {t('s_method_sponsor')}
          </label>
          <p class="hint">{t('s_pms_note')}</p>
        </fieldset>
        {sponsor.enabled === true && (
          <fieldset>
            <legend>{t('s_sponsors')}</legend>
            <Field id="s-sponsor-domains" label={t('s_sponsor_domains')}>
              <input id="s-sponsor-domains" type="text" size={60} value={(sponsor.allowed_domains ?? []).join(', ')} onChange={(e) => setSponsor({ allowed_domains: listOf(text(e)) })} />
            </Field>
            <Field id="s-sponsor-emails" label={t('s_sponsor_emails')}>
              <input id="s-sponsor-emails" type="text" size={60} value={(sponsor.allowed_emails ?? []).join(', ')} onChange={(e) => setSponsor({ allowed_emails: listOf(text(e)) })} />
            </Field>
          </fieldset>
        )}
        <label class="inline">
          <input type="checkbox" checked={doc.msgapp.fallback_sms === true}
            onChange={(e) => setDoc({ ...doc, msgapp: { ...doc.msgapp, fallback_sms: (e.target as HTMLInputElement).checked } })} /> {t('s_fallback')}
        </label>
        <Field id="s-timeout" label={t('s_fallback_timeout')}>
          <input id="s-timeout" type="number" min={1} max={600} value={doc.msgapp.fallback_timeout_sec ?? 30}
            onInput={(e) => setDoc({ ...doc, msgapp: { ...doc.msgapp, fallback_timeout_sec: num(e) } })} />
        </Field>
        <Field id="s-cooldown" label={t('s_cooldown')}>
          <input id="s-cooldown" type="number" min={0} max={3600} value={doc.otp.cooldown_sec} onInput={(e) => setDoc({ ...doc, otp: { ...doc.otp, cooldown_sec: num(e) } })} />
        </Field>
        <Field id="s-guess-device" label={t('s_guess_device')}>
          <input id="s-guess-device" type="number" min={0} max={100000} value={doc.guessing?.per_device ?? 10}
            onInput={(e) => setDoc({ ...doc, guessing: { ...doc.guessing, per_device: num(e) } })} />
        </Field>
        <Field id="s-guess-address" label={t('s_guess_address')}>
          <input id="s-guess-address" type="number" min={0} max={1000000} value={doc.guessing?.per_address ?? 300}
            onInput={(e) => setDoc({ ...doc, guessing: { ...doc.guessing, per_address: num(e) } })} />
        </Field>
        <p><button type="submit" disabled={act.busy}>{t('save')}</button></p>
      </form>
      <OutcomeLine outcome={act.outcome} />
    </>
  );
}
