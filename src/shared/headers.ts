/** Reading Node's parsed request headers, and what may go into the headers of an upstream call. */

/** The first value of a header Node may have parsed into an array (a repeated header). */
export function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** RFC 9110 token characters. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * RFC 9110 field-value characters: HTAB, SP, VCHAR and obs-text. undici
 * refuses anything else (CR, LF, NUL, characters past \xff) with an error
 * that would surface as a failed provider call.
 */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, never forwarded either way. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Headers of the gateway's own call to the provider: the client's would describe another message. */
const OWN_CALL: ReadonlySet<string> = new Set(['host', 'content-length', 'expect']);

/**
 * Why a client or config may not ask for header `name` (lower case) to be
 * forwarded (x-gateway-forward-headers, forward_headers), or null when it may.
 * Besides hop-by-hop ones: host and content-length describe the gateway's own
 * call, and `expect` asks for a 100-continue the gateway already answered
 * (Node did); undici refuses to send it.
 */
export function forwardProblem(name: string): string | null {
  if (!HEADER_NAME.test(name)) return 'is not an HTTP header name';
  if (HOP_BY_HOP.has(name) || name.startsWith('proxy-')) return 'describes one connection and is never forwarded';
  if (OWN_CALL.has(name)) return 'belongs to the gateway’s own call to the provider and is never forwarded';
  return null;
}
