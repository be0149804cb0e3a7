/** A sponsor request waiting for a decision (docs/dashboard-api.md, `jit-approvals`). */
export interface JitApproval {
  id: string;
  site_id: string;
  guest: string;
  sponsor: string;
  requested_at: string;
  expires_at: string;
}

/** Where the waiting requests come from: the sponsor service (engine/signin/sponsor/sponsor-service.ts). */
export interface PendingRequests {
  pending(tenantId: string): Promise<JitApproval[]>;
}

/**
 * The sponsor requests waiting for a decision: every pending sponsor
 * request is a JIT approval. Filing one appends jit.requested to
 * the tenant's event stream and deciding it jit.decided (in the scripts that
 * file and decide it), which is what `stream/jit-approvals` carries. A
 * request whose link runs out unanswered leaves the list when it expires
 * (no event: nothing decided it).
 */
export class JitApprovals {
  constructor(private readonly source: PendingRequests) {}

  pending(tenantId: string): Promise<JitApproval[]> {
    return this.source.pending(tenantId);
  }
}
