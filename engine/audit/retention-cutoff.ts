/** The contract's legal retention: session start and end records are kept 730 days. */
export const RETENTION_DAYS = 730;

/**
 * The first UTC day that must still be kept. The law says two years and the
 * spec 730 days; a two-year span that contains a 29 February is 731 days, so
 * we keep whichever reaches further back: never less than either rule.
 */
export function retentionCutoff(nowMs: number): string {
  const now = new Date(nowMs);
  const byDays = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - RETENTION_DAYS * 86_400_000);
  const byYears = new Date(Date.UTC(now.getUTCFullYear() - 2, now.getUTCMonth(), now.getUTCDate()));
  return (byDays < byYears ? byDays : byYears).toISOString().slice(0, 10);
}
