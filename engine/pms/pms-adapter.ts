/**
 * A property-management system as room sign-in sees it, whatever protocol
 * carries it (FIAS today: fias/fias-link.ts). An adapter holds one hotel's
 * link and reports what the PMS says, in order; the engine keeps the
 * in-house list (pms-guest-store.ts) and decides what a record means for
 * sessions (pms-links.ts).
 */

/** A guest in house: one reservation in one room. */
export interface PmsGuest {
  /** Reservation number (FIAS G#): the identity a share's check-out ends. */
  reservation: string;
  /** Room number (FIAS RN). */
  room: string;
  /** Guest name as the PMS holds it (FIAS GN), e.g. "KÖHLER, A". */
  name: string;
  /** First name (FIAS GF), '' when not sent. */
  firstName: string;
  /** Shares the room with another reservation (FIAS GS = Y). */
  share: boolean;
}

/** What an adapter reports. Every call is awaited before the next record is read, so records apply in the PMS's order. */
export interface PmsListener {
  /**
   * The link is configured and the PMS answered. `resync`: a database resync
   * is asked for now (the adapter asked resyncWanted() first).
   */
  linkUp(resync: boolean): Promise<void>;
  /** The PMS sent something (a record or a keep-alive answer): the link lives. Cheap: called per frame. */
  alive(): void;
  /** The connection closed or its dead-link timer fired; the adapter reconnects by itself. Not called for the adapter's own close(). */
  linkDown(why: string): Promise<void>;
  /** Whether this link start must ask for a database resync (the gap since the link was last alive, or never synced). */
  resyncWanted(): Promise<boolean>;
  checkIn(g: PmsGuest): Promise<void>;
  /** `reservation` '' when the PMS named only the room: every reservation in it. */
  checkOut(c: { reservation: string; room: string }): Promise<void>;
  /**
   * A change of guest data; `oldRoom` set (FIAS RO) when the guest moved rooms.
   * `rekey`: the reservation's key after the change, when the key is the room
   * (a PMS without reservation numbers) and the guest moved.
   */
  change(g: Partial<PmsGuest> & { reservation: string; oldRoom: string; rekey?: string }): Promise<void>;
  resyncStart(): Promise<void>;
  /** One guest of a resync (a GI between DS and DE). */
  resyncGuest(g: PmsGuest): Promise<void>;
  resyncEnd(): Promise<void>;
}

/** One hotel's link to its PMS. */
export interface PmsAdapter {
  /** Connects, and keeps reconnecting with back-off until closed. */
  start(): void;
  /** Ends the link politely (FIAS LE) and stops reconnecting. */
  close(): Promise<void>;
}
