/**
 * The gateway's GC pauses from its /metrics: prom-client's
 * `switchyard_nodejs_gc_duration_seconds{kind}` histogram (src/metrics/metrics.ts
 * sets its buckets), read before and after a run, the difference summed over a
 * scenario's rounds.
 *
 * prom-client's observer records only the first GC entry Node hands it per
 * callback, and Node batches the GCs of one event-loop turn into one callback:
 * counts here are a floor (a few % low under allocation-heavy load).
 */
import { metricValue } from './metrics-text.js';

export const GC_KINDS = ['minor', 'major', 'incremental', 'weakcb'] as const;
export type GcKind = (typeof GC_KINDS)[number];

export interface GcKindFigures {
  count: number;
  /** Seconds, all pauses. */
  sum: number;
  /** Cumulative count per bucket upper bound (seconds), as exposed; +Inf is `count`. */
  buckets: Map<number, number>;
}

export type GcHistogram = Record<GcKind, GcKindFigures>;

const SERIES = 'switchyard_nodejs_gc_duration_seconds';

function emptyKind(): GcKindFigures {
  return { count: 0, sum: 0, buckets: new Map() };
}

/** The histogram as exposed in `text`; a kind with no GC yet has no series and reads as zeros. */
export function parseGc(text: string): GcHistogram {
  const out = Object.fromEntries(GC_KINDS.map((k) => [k, emptyKind()])) as GcHistogram;
  for (const kind of GC_KINDS) {
    const k = out[kind];
    k.count = metricValue(text, `${SERIES}_count{kind="${kind}"}`) ?? 0;
    k.sum = metricValue(text, `${SERIES}_sum{kind="${kind}"}`) ?? 0;
    const prefix = `${SERIES}_bucket{le="`;
    const suffix = `",kind="${kind}"} `;
    for (const line of text.split('\n')) {
      if (!line.startsWith(prefix)) continue;
      const end = line.indexOf(suffix, prefix.length);
      const le = line.slice(prefix.length, end);
      if (end < 0 || le === '+Inf') continue;
      k.buckets.set(Number(le), Number(line.slice(end + suffix.length)));
    }
  }
  return out;
}

/** `a + sign·b`, kind by kind and bucket by bucket: a run's GCs (after − before), or rounds summed. */
export function combineGc(a: GcHistogram, b: GcHistogram, sign: 1 | -1 = 1): GcHistogram {
  const out = {} as GcHistogram;
  for (const kind of GC_KINDS) {
    const x = a[kind];
    const y = b[kind];
    const buckets = new Map<number, number>();
    for (const le of new Set([...x.buckets.keys(), ...y.buckets.keys()])) buckets.set(le, (x.buckets.get(le) ?? 0) + sign * (y.buckets.get(le) ?? 0));
    out[kind] = { count: x.count + sign * y.count, sum: x.sum + sign * y.sum, buckets };
  }
  return out;
}

export function noGc(): GcHistogram {
  return parseGc('');
}

/** Bucket bounds, seconds, ascending (those of the first kind that has any: every kind has the same). */
export function gcBounds(h: GcHistogram): number[] {
  const kind = GC_KINDS.find((k) => h[k].buckets.size > 0);
  return kind ? [...h[kind].buckets.keys()].sort((a, b) => a - b) : [];
}

/**
 * Pauses of every kind longer than `seconds`, which must be a bucket bound
 * (undefined otherwise: the histogram cannot tell), and their time at least:
 * each counted at the lower bound of its bucket, so a floor.
 */
export function pausesAbove(h: GcHistogram, seconds: number): { count: number; minSeconds: number } | undefined {
  const bounds = gcBounds(h);
  if (!bounds.includes(seconds)) return undefined;
  let count = 0;
  let minSeconds = 0;
  for (const kind of GC_KINDS) {
    const k = h[kind];
    let below = k.buckets.get(seconds) ?? 0;
    count += k.count - below;
    for (const le of [...bounds.filter((b) => b > seconds), Infinity]) {
      const upTo = le === Infinity ? k.count : (k.buckets.get(le) ?? 0);
      const lower = bounds.filter((b) => b < le).at(-1) ?? seconds;
      minSeconds += (upTo - below) * lower;
      below = upTo;
    }
  }
  return { count, minSeconds };
}

/** What the report shows of one scenario's GCs. */
export interface GcFigures {
  perThousand: Record<GcKind, number>;
  usPerRequest: number;
  /** % of the runs' wall time spent in GC pauses. */
  wallPercent: number;
  above1ms?: { count: number; minSeconds: number };
  above10ms?: { count: number; minSeconds: number };
  /** The pauses above 1 ms, at least, in mean requests' time (wall time / requests: at 1 connection, one request's latency). */
  above1msInRequests?: number;
}

export function gcFigures(gc: { histogram: GcHistogram; seconds: number }, requests: number): GcFigures {
  const h = gc.histogram;
  const n = Math.max(requests, 1);
  const sum = GC_KINDS.reduce((a, k) => a + h[k].sum, 0);
  const above1ms = pausesAbove(h, 0.001);
  return {
    perThousand: Object.fromEntries(GC_KINDS.map((k) => [k, (1000 * h[k].count) / n])) as Record<GcKind, number>,
    usPerRequest: (sum * 1e6) / n,
    wallPercent: gc.seconds > 0 ? (100 * sum) / gc.seconds : NaN,
    above1ms,
    above10ms: pausesAbove(h, 0.01),
    above1msInRequests: above1ms && gc.seconds > 0 ? above1ms.minSeconds / (gc.seconds / n) : undefined,
  };
}
