import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorSentence, useI18n, type Translate } from '../shared/index.js';
import type { ConsoleKey } from './messages.js';

/** The console's translator and the raw one (for error sentences, whose keys are the shared catalogue's). */
export function useConsole(): { t: Translate<ConsoleKey>; say(err: unknown): string; locale: string } {
  const { t, locale } = useI18n();
  return { t: t as Translate<ConsoleKey>, say: (err) => errorSentence(err, t), locale };
}

/** An outcome line: a failure as a sentence (role alert) or a success (role status), announced by screen readers. */
export type Outcome = { ok: true; text: string } | { ok: false; text: string } | null;

export function OutcomeLine(props: { outcome: Outcome }): preact.JSX.Element | null {
  const o = props.outcome;
  if (!o) return null;
  return o.ok ? <p class="ok" role="status">{o.text}</p> : <p class="error-summary" role="alert">{o.text}</p>;
}

/**
 * Runs an action and reports it: `run(fn, success)` sets the outcome to the
 * success sentence or to the failure as a sentence; `busy` while it runs.
 */
export function useAction(): { outcome: Outcome; busy: boolean; run(fn: () => Promise<string>): Promise<boolean>; setOutcome(o: Outcome): void } {
  const { say } = useConsole();
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [busy, setBusy] = useState(false);
  const run = async (fn: () => Promise<string>): Promise<boolean> => {
    setBusy(true);
    try {
      setOutcome({ ok: true, text: await fn() });
      return true;
    } catch (err) {
      setOutcome({ ok: false, text: say(err) });
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { outcome, busy, run, setOutcome };
}

/**
 * A modal confirmation (the native <dialog>: focus is kept inside, Escape
 * cancels). `children` holds the choices of the action (extend by, block for).
 */
export function ConfirmDialog(props: {
  title: string; confirmLabel: string; danger?: boolean; onConfirm(): void; onCancel(): void; children?: ComponentChildren;
}): preact.JSX.Element {
  const { t } = useConsole();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onCancel={(e) => { e.preventDefault(); props.onCancel(); }}>
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); props.onConfirm(); }}>
        <h2 id="dialog-title">{props.title}</h2>
        {props.children}
        <div class="actions">
          <button type="submit" class={props.danger ? 'danger' : undefined}>{props.confirmLabel}</button>
          <button type="button" class="secondary" onClick={props.onCancel}>{t('cancel')}</button>
        </div>
      </form>
    </dialog>
  );
}

/** A labelled field: the label always visible, the input's id tied to it. */
export function Field(props: { id: string; label: string; hint?: string; children: ComponentChildren }): preact.JSX.Element {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.hint && <p class="hint" id={`${props.id}-hint`}>{props.hint}</p>}
      {props.children}
    </div>
  );
}

/** Bytes as the operator reads them: B, KB, MB, GB (powers of 1024). */
export function bytes(n: number, locale: string): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toLocaleString(locale, { maximumFractionDigits: i === 0 ? 0 : 1 })} ${units[i]}`;
}

/** Seconds as HH:MM:SS (hours past 24 keep counting: a session of 30 hours reads 30:00:00). */
export function hms(sec: number): string {
  const s = Math.max(0, Math.floor(sec));
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(Math.floor(s / 3600))}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/** A timestamp in the operator's language, to the minute (or to the second). */
export function when(iso: string | null | undefined, locale: string, seconds = false): string {
  if (!iso) return '';
  return new Date(iso).toLocaleString(locale, { dateStyle: 'short', timeStyle: seconds ? 'medium' : 'short' });
}

/** Today's UTC day, YYYY-MM-DD. */
export const utcToday = (): string => new Date().toISOString().slice(0, 10);

/** The value of an input event's target. */
export const val = (e: Event): string => (e.target as HTMLInputElement).value;
