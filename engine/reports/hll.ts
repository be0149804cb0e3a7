/**
 * HyperLogLog sketches of the devices seen (report_devices, migration 023):
 * 2^12 one-byte registers, each the highest rank of the MACs hashed to it
 * (Flajolet et al. 2007; ranks and registers computed by Postgres,
 * report_hll_reg/report_hll_rank, so the sink and the rebuild agree byte for
 * byte). Standard error 1.04/sqrt(4096) = 1.6 %; below 2.5 x 4096 devices
 * linear counting takes over, which is exact in practice for a handful.
 */
export const HLL_REGISTERS = 4096;

/** Raises `into` to the register-wise maximum of itself and `sketch` (a union of the two sets). */
export function mergeSketch(into: Uint8Array, sketch: Uint8Array): void {
  const n = Math.min(into.length, sketch.length);
  for (let i = 0; i < n; i++) if (sketch[i]! > into[i]!) into[i] = sketch[i]!;
}

/** The estimated number of distinct devices in a sketch, rounded. */
export function estimateSketch(regs: Uint8Array): number {
  const m = HLL_REGISTERS;
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < m; i++) {
    const r = regs[i] ?? 0;
    sum += 2 ** -r;
    if (r === 0) zeros += 1;
  }
  if (zeros === m) return 0;
  const alpha = 0.7213 / (1 + 1.079 / m);
  const raw = (alpha * m * m) / sum;
  // Small range: linear counting over the empty registers (no large-range correction: 64-bit hashes).
  return Math.round(raw <= 2.5 * m && zeros > 0 ? m * Math.log(m / zeros) : raw);
}
