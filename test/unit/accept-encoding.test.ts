import { describe, expect, it } from 'vitest';
import { acceptsEncoding } from '../../http/accept-encoding.js';

describe('acceptsEncoding', () => {
  it('takes a coding named or covered by *, with a q above 0', () => {
    for (const v of ['gzip', 'gzip, deflate, br', 'br, GZIP', 'deflate, gzip;q=0.5', 'x-gzip', '*', 'br;q=1, *;q=0.1', 'gzip ; q=1.0']) expect(acceptsEncoding(v, 'gzip'), v).toBe(true);
    for (const v of ['br', 'gzip, deflate, br;q=0.9', '*']) expect(acceptsEncoding(v, 'br'), v).toBe(true);
  });

  it('does not when it is refused, left out, or the header is empty or garbled', () => {
    for (const v of ['', 'br', 'identity', 'gzip;q=0', 'br, gzip;q=0.0', '*;q=0', 'gzip;q=0, *', 'gzip;q=', 'gzip;q=abc', 'gzipped']) expect(acceptsEncoding(v, 'gzip'), v).toBe(false);
    for (const v of ['gzip', 'br;q=0', 'brotli', '*;q=0']) expect(acceptsEncoding(v, 'br'), v).toBe(false);
  });
});
