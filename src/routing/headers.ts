/** Which headers cross the gateway, in each direction. */
import { HOP_BY_HOP } from '../shared/headers.js';

/**
 * Request headers the gateway sets itself or keeps: the provider credential
 * comes from the target; `expect` asks for a 100-continue the gateway already
 * answered (Node did), and undici refuses to send it.
 */
const NOT_FORWARDED = new Set(['host', 'content-length', 'authorization', 'forwarded', 'x-real-ip', 'via', 'expect']);

export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name);
}

/** Client headers that never reach a provider: hop-by-hop, the gateway's own, x-forwarded-* and the like. */
export function isPrivateHeader(name: string): boolean {
  return HOP_BY_HOP.has(name) || NOT_FORWARDED.has(name) || name.startsWith('x-gateway-') || name.startsWith('x-forwarded-');
}
