import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * Renders a Helm chart's templates for a test where no `helm` binary can be had
 * (neither Debian bookworm nor npm ships one). It knows the small part of Go's
 * template language deploy/helm/guestwifi uses, and throws on anything else,
 * so a template that grows past it fails the test instead of rendering wrong:
 *   {{ .Values.a.b }}  {{ .Release.Name }}  {{ .Chart.Name }} / .Chart.AppVersion
 *   pipes: quote, nindent N, indent N;  toYaml X;  {{- if [not] X }} ... {{- else }} ... {{- end }}
 *   trim markers {{- and -}}.
 * A path that is not in the values throws (a typo is not silently empty).
 */
export interface RenderContext {
  Values: Record<string, unknown>;
  Release: { Name: string; Namespace: string };
  Chart: { Name: string; Version: string; AppVersion: string };
}

type Node = { text: string } | { expr: string } | { cond: string; then: Node[]; else: Node[] };

function lookup(ctx: RenderContext, path: string): unknown {
  if (!path.startsWith('.')) throw new Error(`not a path: ${path}`);
  let v: unknown = ctx;
  for (const part of path.slice(1).split('.')) {
    if (v === null || typeof v !== 'object' || !(part in (v as object))) throw new Error(`no value at ${path}`);
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

const truthy = (v: unknown): boolean =>
  !(v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0)
    || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0));

const toYaml = (v: unknown): string => stringify(v, { indent: 2 }).replace(/\n$/, '');
const indent = (n: number, s: string): string => s.split('\n').map((l) => ' '.repeat(n) + l).join('\n');
const asString = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : toYaml(v));

function evaluate(ctx: RenderContext, expr: string): unknown {
  const [head, ...pipes] = expr.split('|').map((s) => s.trim());
  const words = head!.split(/\s+/);
  let v: unknown;
  if (words[0] === 'toYaml' && words.length === 2) v = toYaml(lookup(ctx, words[1]!));
  else if (words[0] === 'not' && words.length === 2) v = !truthy(lookup(ctx, words[1]!));
  else if (words.length === 1) v = lookup(ctx, words[0]!);
  else throw new Error(`unsupported expression: ${expr}`);
  for (const pipe of pipes) {
    const [fn, arg] = pipe.split(/\s+/);
    if (fn === 'quote') v = JSON.stringify(asString(v));
    else if (fn === 'nindent' && arg) v = '\n' + indent(Number(arg), asString(v));
    else if (fn === 'indent' && arg) v = indent(Number(arg), asString(v));
    else throw new Error(`unsupported function: ${pipe}`);
  }
  return v;
}

/** Splits into text and actions, applying the trim markers. */
function tokens(src: string): ({ text: string } | { action: string })[] {
  const out: ({ text: string } | { action: string })[] = [];
  const re = /\{\{(-\s)?\s*(.*?)\s*(\s-)?\}\}/gs;
  let last = 0;
  let trimNext = false;
  for (const m of src.matchAll(re)) {
    let text = src.slice(last, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (m[1]) text = text.replace(/\s+$/, '');
    out.push({ text }, { action: m[2]! });
    trimNext = m[3] !== undefined;
    last = m.index! + m[0].length;
  }
  let rest = src.slice(last);
  if (trimNext) rest = rest.replace(/^\s+/, '');
  out.push({ text: rest });
  return out;
}

function tree(src: string): Node[] {
  const root: Node[] = [];
  const stack: { nodes: Node[]; cond?: { cond: string; then: Node[]; else: Node[] }; inElse?: boolean }[] = [{ nodes: root }];
  const top = () => stack[stack.length - 1]!;
  for (const t of tokens(src)) {
    if ('text' in t) { top().nodes.push({ text: t.text }); continue; }
    const a = t.action;
    if (a.startsWith('/*')) continue;
    if (a.startsWith('if ')) {
      const node = { cond: a.slice(3).trim(), then: [] as Node[], else: [] as Node[] };
      top().nodes.push(node);
      stack.push({ nodes: node.then, cond: node });
    } else if (a === 'else') {
      const f = top();
      if (!f.cond || f.inElse) throw new Error('else without if');
      f.nodes = f.cond.else;
      f.inElse = true;
    } else if (a === 'end') {
      if (stack.length === 1) throw new Error('end without if');
      stack.pop();
    } else top().nodes.push({ expr: a });
  }
  if (stack.length !== 1) throw new Error('if without end');
  return root;
}

function emit(ctx: RenderContext, nodes: Node[]): string {
  return nodes.map((n) => ('text' in n ? n.text : 'expr' in n ? asString(evaluate(ctx, n.expr))
    : emit(ctx, truthy(evaluate(ctx, n.cond)) ? n.then : n.else))).join('');
}

/** Every template of the chart (templates/*.yaml) rendered with its values.yaml merged with `overrides` (one level deep per key). */
export function renderChart(chartDir: string, release: string, overrides: Record<string, unknown> = {}): Map<string, string> {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string; version: string; appVersion: string };
  const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...values };
  for (const [k, v] of Object.entries(overrides)) {
    const base = merged[k];
    merged[k] = v && typeof v === 'object' && !Array.isArray(v) && base && typeof base === 'object' ? { ...(base as object), ...(v as object) } : v;
  }
  const ctx: RenderContext = { Values: merged, Release: { Name: release, Namespace: 'default' }, Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion } };
  const out = new Map<string, string>();
  const dir = join(chartDir, 'templates');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml')).sort()) out.set(f, emit(ctx, tree(readFileSync(join(dir, f), 'utf8'))));
  return out;
}
