/**
 * What text holds that several checks look for: Markdown code fences and
 * JSON values. Found by scanning, not by backtracking patterns, so the time
 * is linear in the text whatever it holds.
 */

export interface Fence {
  /** The info string's first word, lower-cased ('' when none). */
  lang: string;
  body: string;
}

/** The fenced code blocks (```lang … ```) of `text`, in order; an unclosed fence ends the search. */
export function fences(text: string): Fence[] {
  const out: Fence[] = [];
  let at = 0;
  for (;;) {
    const open = text.indexOf('```', at);
    if (open === -1) return out;
    let infoStart = open + 3;
    while (text[infoStart] === '`') infoStart++;
    const lineEnd = text.indexOf('\n', infoStart);
    if (lineEnd === -1) return out;
    const close = text.indexOf('```', lineEnd + 1);
    if (close === -1) return out;
    out.push({ lang: text.slice(infoStart, lineEnd).trim().split(/\s/)[0]!.toLowerCase(), body: text.slice(lineEnd + 1, close) });
    at = close + 3;
    while (text[at] === '`') at++;
  }
}

/** At most this many JSON values are tried from one text. */
const MAX_CANDIDATES = 32;

/**
 * The JSON values `text` holds, most likely first: the whole text, then the
 * body of each code fence, then each balanced `{…}` outside them that parses.
 */
export function jsonValues(text: string): unknown[] {
  const out: unknown[] = [];
  const add = (s: string): void => {
    if (out.length >= MAX_CANDIDATES) return;
    try {
      out.push(JSON.parse(s) as unknown);
    } catch {
      // Not JSON: not a candidate.
    }
  };
  add(text.trim());
  if (out.length > 0) return out;
  for (const f of fences(text)) add(f.body.trim());
  for (const span of objectSpans(text)) add(span);
  return out;
}

/** Each outermost `{…}` of `text` whose braces balance, strings' braces aside. */
function objectSpans(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length && spans.length < MAX_CANDIDATES; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && depth > 0 && --depth === 0) spans.push(text.slice(start, i + 1));
  }
  return spans;
}
