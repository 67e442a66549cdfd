/** Which headers cross the gateway, in each direction. */

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, never forwarded either way. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Request headers the gateway sets itself or keeps: the provider credential comes from the target. */
const NOT_FORWARDED = new Set(['host', 'content-length', 'authorization', 'forwarded', 'x-real-ip', 'via']);

export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name);
}

/** Client headers that never reach a provider: hop-by-hop, the gateway's own, x-forwarded-* and the like. */
export function isPrivateHeader(name: string): boolean {
  return HOP_BY_HOP.has(name) || NOT_FORWARDED.has(name) || name.startsWith('x-gateway-') || name.startsWith('x-forwarded-');
}
