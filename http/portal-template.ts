/**
 * The portal page's template engine: logic-less, compiled once at start-up
 * (STYLE 6), rendered per request with a view of plain values. Kept apart from
 * the page's route so the page's rules and the HTML machinery change apart.
 */

/** The values a template is rendered with. */
export type View = Record<string, unknown>;

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** HTML-escapes a value for text or a quoted attribute. */
export const esc = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]!);

/** A parsed template: text, a value ({{x}} escaped, {{{x}}} raw), or a section shown when its value is (not) truthy. */
export type TemplateNode = string | { v: string; raw: boolean } | { s: string; when: boolean; body: TemplateNode[] };

/**
 * Parses a logic-less template once, at start-up: {{#x}}..{{/x}} shown when x
 * is truthy, {{^x}}..{{/x}} when not, {{{x}}} raw, {{x}} HTML-escaped.
 * Sections of one name do not nest.
 */
export function compileTemplate(tpl: string): TemplateNode[] {
  const nodes: TemplateNode[] = [];
  const re = /\{\{([#^])(\w+)\}\}([\s\S]*?)\{\{\/\2\}\}|\{\{\{(\w+)\}\}\}|\{\{(\w+)\}\}/g;
  let at = 0;
  for (let m = re.exec(tpl); m; m = re.exec(tpl)) {
    if (m.index > at) nodes.push(tpl.slice(at, m.index));
    if (m[2]) nodes.push({ s: m[2], when: m[1] === '#', body: compileTemplate(m[3]!) });
    else if (m[4]) nodes.push({ v: m[4], raw: true });
    else nodes.push({ v: m[5]!, raw: false });
    at = re.lastIndex;
  }
  if (at < tpl.length) nodes.push(tpl.slice(at));
  return nodes;
}

/** A value at least this long is a run of its own (renderRuns). */
const LONG_VALUE = 1024;

/**
 * Renders a compiled template as runs: the text between the values named in
 * `perRequest` at even places, those values at odd places, each as the page
 * carries it (escaped unless raw). Joined, they are the page. A page whose
 * other values repeat from one request to the next (the styles, the script,
 * the message catalogue) then repeats its runs, and http/gzip-runs.ts
 * compresses each run once. A long raw value is a run of its own, with an
 * empty value before and after: such a value (the styles, the script) is the
 * same string from one page to the next, whose hash V8 keeps, so finding its
 * run costs next to nothing, where a run built for the page is hashed whole.
 */
export function renderRuns(nodes: TemplateNode[], view: View, perRequest: ReadonlySet<string>): string[] {
  const runs = [''];
  const walk = (list: TemplateNode[]): void => {
    for (const n of list) {
      if (typeof n === 'string') runs[runs.length - 1] += n;
      else if ('s' in n) {
        if (Boolean(view[n.s]) === n.when) walk(n.body);
      } else {
        const value = n.raw ? String(view[n.v] ?? '') : esc(view[n.v]);
        if (perRequest.has(n.v)) runs.push(value, '');
        else if (n.raw && value.length >= LONG_VALUE) runs.push('', value, '', '');
        else runs[runs.length - 1] += value;
      }
    }
  };
  walk(nodes);
  return runs;
}

const NONE: ReadonlySet<string> = new Set();

/** Renders a compiled template with a view. */
export function renderTemplate(nodes: TemplateNode[], view: View): string {
  return renderRuns(nodes, view, NONE).join('');
}
