/** A sponsor request waiting for a decision (docs/dashboard-api.md, `jit-approvals`). */
export interface JitApproval {
  id: string;
  site_id: string;
  guest: string;
  sponsor: string;
  requested_at: string;
  expires_at: string;
}

/**
 * The sponsor requests waiting for a decision. Sponsor sign-in does not
 * exist yet, so nothing ever waits: the list is empty, not made up. When
 * sponsor sign-in comes, its store answers here (and appends jit.requested /
 * jit.decided to the event stream) and the route needs no change.
 */
export class JitApprovals {
  async pending(_tenantId: string): Promise<JitApproval[]> {
    return [];
  }
}
