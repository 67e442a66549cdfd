/**
 * How deeply a JSON text the gateway takes from a caller (a request body, the
 * x-gateway-config header) may nest. The gateway's own walks over such values
 * recurse (the cache key, param edits, re-serialising an edited body, the
 * config's validation and freezing), and a 10 KB body of brackets nested
 * 5,000 deep overflowed the stack in them: a 500 for one request's input.
 */

/** Far more than any API body, tool schema or config needs. */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether `text` nests arrays and objects deeper than `max`: one pass over
 * the text, brackets inside strings not counted. Meant to run before
 * JSON.parse, so it needs no valid JSON.
 */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}
