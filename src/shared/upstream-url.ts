/**
 * What may be the base URL of upstream calls (a config's custom_host, the
 * x-gateway-custom-host header): checked where it is read, so a bad value is
 * a 400 naming it, never a failed provider call.
 */

// Printable ASCII only: a URL with spaces, control characters or raw non-ASCII bytes is not one undici can send (RFC 3986; IDNs go punycoded).
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/** The last value that passed: a client sends the same host request after request, and a URL parse is not free. */
let lastGood: string | undefined;

/** Why `value` cannot be the base URL of upstream calls; null when it can. */
export function upstreamUrlProblem(value: string): string | null {
  if (value === lastGood) return null;
  if (!PRINTABLE_ASCII.test(value)) return 'must be an http(s) URL of printable ASCII characters, without spaces';
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) return 'must be an absolute http:// or https:// URL';
  lastGood = value;
  return null;
}
