import { describe, expect, it } from 'vitest';
import { isPostgresUnreachable } from '../../engine/index.js';

/** What errorReply answers 503 for (Postgres out of reach) and what stays a 500 (a fault of the query or the code). */
describe('isPostgresUnreachable', () => {
  const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

  it('a refused, reset, unresolvable or shut-down server, pg connection states and pg-pool time-outs', () => {
    for (const e of [coded('ECONNREFUSED'), coded('ECONNRESET'), coded('ETIMEDOUT'), coded('ENOTFOUND'), coded('EAI_AGAIN'), coded('08006'), coded('08001'), coded('57P01'), coded('57P03'),
      new Error('Connection terminated unexpectedly'), new Error('timeout exceeded when trying to connect')]) {
      expect(isPostgresUnreachable(e), e.message + (e as { code?: string }).code).toBe(true);
    }
  });

  it('not a wrong query, a constraint, a cancelled statement or a non-error', () => {
    for (const e of [coded('42P01'), coded('23505'), coded('57014'), new Error('Connection refused by the policy'), 'ECONNREFUSED', null]) {
      expect(isPostgresUnreachable(e)).toBe(false);
    }
  });
});
