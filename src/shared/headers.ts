/** Reading Node's parsed request headers. */

/** The first value of a header Node may have parsed into an array (a repeated header). */
export function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
