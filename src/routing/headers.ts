/** Which headers cross the gateway, in each direction. */

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, never forwarded either way. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * Request headers the gateway sets itself or keeps: the provider credential
 * comes from the target; `expect` asks for a 100-continue the gateway already
 * answered (Node did), and undici refuses to send it.
 */
const NOT_FORWARDED = new Set(['host', 'content-length', 'authorization', 'forwarded', 'x-real-ip', 'via', 'expect']);

export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name);
}

/** Why a client may not ask for header `name` to be forwarded (forward_headers), or null when it may. */
export function forwardProblem(name: string): string | null {
  if (!HEADER_NAME.test(name)) return 'is not an HTTP header name';
  if (HOP_BY_HOP.has(name) || name === 'expect') return 'describes the client’s own connection and is never forwarded';
  return null;
}

/** RFC 9110 token characters. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Client headers that never reach a provider: hop-by-hop, the gateway's own, x-forwarded-* and the like. */
export function isPrivateHeader(name: string): boolean {
  return HOP_BY_HOP.has(name) || NOT_FORWARDED.has(name) || name.startsWith('x-gateway-') || name.startsWith('x-forwarded-');
}
