/**
 * What the answer cache did with a request, as `x-gateway-cache-status` tells
 * the client: decided by the cache (cache/answer-cache.ts), recorded by the
 * request log and the request's span.
 */
export type CacheStatus = 'HIT' | 'SEMANTIC HIT' | 'MISS' | 'REFRESH' | 'DISABLED';
