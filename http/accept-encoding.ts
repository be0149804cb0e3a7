/**
 * Whether a request's Accept-Encoding takes a content coding (RFC 9110 §12.5.3): named (or
 * `x-gzip` for gzip), else covered by `*`, with a q above 0. A coding named with q=0 is
 * refused even when `*` would take it.
 */
export function acceptsEncoding(acceptEncoding: string, coding: 'gzip' | 'br'): boolean {
  let star = false;
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name = '', ...params] = part.split(';').map((x) => x.trim());
    const q = params.find((x) => x.startsWith('q='));
    const wanted = q === undefined || Number(q.slice(2)) > 0;
    if (name === coding || (coding === 'gzip' && name === 'x-gzip')) return wanted;
    if (name === '*') star = wanted;
  }
  return star;
}
