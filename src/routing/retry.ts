/**
 * Retry policy: which statuses are retried and how long to wait. The loop
 * itself lives in router.ts, next to the attempt it repeats.
 */
import type { RetryConfig } from '../config/types.js';

export const DEFAULT_RETRY_CODES: readonly number[] = [429, 500, 502, 503, 504];
export const MAX_RETRY_AFTER_MS = 60_000;
const BASE_DELAY_MS = 100;
const MAX_BACKOFF_MS = 10_000;

export function isRetriable(retry: RetryConfig, status: number): boolean {
  return (retry.on_status_codes ?? DEFAULT_RETRY_CODES).includes(status);
}

/** Exponential backoff with jitter: 100 ms · 2^n, scaled by a random factor in [0.5, 1). */
export function backoffMs(retryIndex: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** retryIndex);
  return Math.round(ceiling * (0.5 + random() * 0.5));
}

/**
 * The provider's own wait, when it gave one: `retry-after-ms` (milliseconds,
 * as OpenAI sends) wins over `retry-after` (seconds or an HTTP date). Capped
 * at 60 s so a provider cannot park a request for minutes.
 */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | null {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined) {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return Math.min(n, MAX_RETRY_AFTER_MS);
  }
  const after = first(headers['retry-after']);
  if (after === undefined) return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP date names its month; V8's lenient Date.parse would read "-1" as a past date (0 ms wait).
  if (!/[a-z]/i.test(after)) return null;
  const date = Date.parse(after);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
