import { describe, expect, it } from 'vitest';
import { takesGzip } from '../../http/routes/portal-page.js';

describe('takesGzip (the portal page\'s Accept-Encoding)', () => {
  it('takes gzip when named or covered by *, with a q above 0', () => {
    for (const v of ['gzip', 'gzip, deflate, br', 'br, GZIP', 'deflate, gzip;q=0.5', 'x-gzip', '*', 'br;q=1, *;q=0.1', 'gzip ; q=1.0']) expect(takesGzip(v), v).toBe(true);
  });

  it('does not when it is refused, left out, or the header is empty or garbled', () => {
    for (const v of ['', 'br', 'identity', 'gzip;q=0', 'br, gzip;q=0.0', '*;q=0', 'gzip;q=0, *', 'gzip;q=', 'gzip;q=abc', 'gzipped']) expect(takesGzip(v), v).toBe(false);
  });
});
