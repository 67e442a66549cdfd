/**
 * Embedding vectors as the semantic cache keeps them: Float32, scaled to unit
 * length once when they arrive, so cosine similarity is a plain dot product
 * on every comparison. In Redis they are little-endian Float32 bytes, the same
 * on every machine.
 */

/** The vector scaled to length 1; null when it has no direction (all zeros) or holds a non-number. */
export function unitVector(values: readonly unknown[]): Float32Array | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const v of values) {
    if (typeof v !== 'number' || !Number.isFinite(v)) return null;
    sum += v * v;
  }
  if (sum === 0) return null;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(values.length);
  for (let i = 0; i < out.length; i++) out[i] = (values[i] as number) / norm;
  return out;
}

/** Cosine similarity of two unit vectors; -Infinity when their dimensions differ (never a match). */
export function cosine(a: Float32Array, b: Float32Array): number {
  const n = a.length;
  if (n !== b.length) return -Infinity;
  // Four sums at once: independent additions, about twice as fast as one running sum on V8.
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += a[i]! * b[i]!;
    s1 += a[i + 1]! * b[i + 1]!;
    s2 += a[i + 2]! * b[i + 2]!;
    s3 += a[i + 3]! * b[i + 3]!;
  }
  for (; i < n; i++) s0 += a[i]! * b[i]!;
  return s0 + s1 + s2 + s3;
}

export function vectorBytes(v: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i]!, i * 4);
  return out;
}

/** Null when the bytes cannot be a vector (cut short, or not ours). */
export function vectorOf(bytes: Buffer): Float32Array | null {
  if (bytes.length === 0 || bytes.length % 4 !== 0) return null;
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
