/**
 * default.containsCode (a code fence in the given language; Markdown's
 * language tags mapped to Portkey's names) and default.validUrls (every
 * http(s) URL in the text is well-formed). validUrls judges syntax only: the
 * gateway makes no call to the URLs or to DNS for a check (no request may
 * make it reach an address it names), so `onlyDNS` is accepted and changes
 * nothing.
 */
import { bool, enumOf, optional } from '../../shared/json-schema.js';
import { asIs, judged, needText, type CheckDefinition } from '../check.js';
import { fences } from './found.js';

const FORMATS = [
  'SQL', 'Python', 'TypeScript', 'JavaScript', 'Java', 'C#', 'C++', 'C', 'Ruby', 'PHP', 'Swift', 'Kotlin', 'Go', 'Rust', 'Scala', 'R',
  'Perl', 'Shell', 'HTML', 'CSS', 'XML', 'JSON', 'YAML', 'Markdown', 'Dockerfile',
] as const;

/** Markdown language tags Portkey maps to its names; any other tag is compared as written. */
const TAGS: Readonly<Record<string, string>> = {
  sql: 'SQL', py: 'Python', python: 'Python', gyp: 'Python', ts: 'TypeScript', tsx: 'TypeScript', typescript: 'TypeScript',
  js: 'JavaScript', jsx: 'JavaScript', javascript: 'JavaScript', java: 'Java', cs: 'C#', cpp: 'C++', c: 'C', rb: 'Ruby', php: 'PHP',
  swift: 'Swift', kt: 'Kotlin', go: 'Go', rs: 'Rust', scala: 'Scala', r: 'R', pl: 'Perl', sh: 'Shell', html: 'HTML', css: 'CSS',
  xml: 'XML', json: 'JSON', yml: 'YAML', md: 'Markdown', dockerfile: 'Dockerfile',
};

export const containsCode: CheckDefinition<{ format: string }> = {
  hooks: ['before', 'after'],
  parameters: { format: enumOf(FORMATS, `one of ${FORMATS.join(', ')}`) },
  prepare: asIs,
  run(s, p) {
    const found = fences(needText(s)).map((f) => TAGS[f.lang] ?? f.lang);
    return judged(found.includes(p.format), `the text has code in ${p.format}`, `the text has no code in ${p.format}`, { foundFormats: found });
  },
};

/** A URL runs until a space, a quote, a comma or a bracket; one character class, so linear. */
const URLS = /https?:\/\/[^\s,"'{}[\]<>]+/g;
/** What may end a sentence around a URL: not part of it. */
const TRAILING = '.,)!?;:';

/** Parses as a URL whose host is an IP address or a name of labels (letters, digits, `-` and `_`, 1 to 63 each). */
function wellFormed(raw: string): boolean {
  let end = raw.length;
  while (end > 0 && TRAILING.includes(raw[end - 1]!)) end--;
  let host: string;
  try {
    // WHATWG parsing: IP addresses normalised, names lower-cased and punycoded.
    host = new URL(raw.slice(0, end)).hostname;
  } catch {
    return false;
  }
  if (host.startsWith('[')) return true;
  const labels = (host.endsWith('.') ? host.slice(0, -1) : host).split('.');
  return labels.every((l) => l.length >= 1 && l.length <= 63 && LABEL.test(l) && !l.startsWith('-') && !l.endsWith('-'));
}

const LABEL = /^[a-z0-9_-]+$/;

export const validUrls: CheckDefinition<{ onlyDNS?: boolean }> = {
  hooks: ['before', 'after'],
  parameters: optional({ onlyDNS: bool }),
  prepare: asIs,
  run(s) {
    const urls = needText(s).match(URLS) ?? [];
    if (urls.length === 0) return { verdict: false, explanation: 'the text has no URLs' };
    const invalid = urls.filter((u) => !wellFormed(u));
    return judged(invalid.length === 0, `all ${urls.length} URL(s) are well-formed`, `${invalid.length} of ${urls.length} URL(s) are not well-formed`, {
      invalidUrls: invalid,
    });
  },
};
