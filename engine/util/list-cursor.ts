/**
 * Cursors of the long lists (vouchers, sessions): the id of the last row a
 * page showed, opaque to the caller (base64url). A list pages on from that
 * row's place in its order (keyset), so page 1,000 costs what page 1 does,
 * where an offset makes Postgres read and drop every row before it.
 */
export function encodeCursor(rowId: string): string {
  return Buffer.from(rowId, 'utf8').toString('base64url');
}

/** The row id a cursor names; '' for one that is not ours (its page is then empty). */
export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^[\w-]{1,64}$/.test(id) ? id : '';
}
