/**
 * Prompt templates rendered with Mustache (the `mustache` package):
 * variables, sections, inverted sections and partials. Two kinds of
 * template: a chat template is a JSON list of messages (its text starts
 * with `[`), plain text is anything else and renders to one user message.
 *
 * In a chat template every `{{name}}` is written as the inside of a JSON
 * string (quotes, backslashes and control characters escaped; objects and
 * lists as their JSON text), so a value cannot break out of the string it
 * stands in; a partial's text is escaped the same way (a partial is text
 * inside a message). `{{{name}}}` and `{{&name}}` insert the value raw
 * (objects and lists as JSON), for structure the template means to take
 * from the caller; the result must still parse. Plain text inserts values
 * as they are: no HTML escaping, prompts are not HTML.
 *
 * Required variables: every variable tag outside any section, in the
 * template or in a partial it includes outside a section, must have a value
 * (not undefined or null) in `variables`; a missing one is a 400 naming it.
 * Inside a section a tag may resolve from any enclosing context, so it is
 * not required; a section's own name is not required (missing is falsy).
 */
import Mustache from 'mustache';
import { LRUCache } from 'lru-cache';
import { invalid, type GatewayError, type Result } from '../shared/errors.js';

export type TemplateKind = 'chat' | 'text';

/** A chat message as a template renders it; the model endpoint's validation judges the rest. */
export type Message = Record<string, unknown> & { role: string };

/** A template with every partial it may include, checked and ready to render. */
export interface Prepared {
  kind: TemplateKind;
  template: string;
  /** Partial name as written in its tag (`greeting`, `greeting@3`) → the text rendered for it. */
  partials: ReadonlyMap<string, string>;
  /** Dotted variable names that must have a value. */
  required: readonly string[];
  /** The same, split at the dots (split once, not per render). */
  requiredPaths: readonly (readonly string[])[];
  /** Mustache's partial lookup over `partials`. */
  lookupPartial: (name: string) => string | undefined;
}

type Token = [string, string, number, number, Token[]?, number?];

/**
 * Parsed templates are kept by Mustache keyed by their text: bounded by the
 * characters they hold, so templates of any size cannot grow it without end.
 */
const PARSED_CHARS = 16 * 1024 * 1024;

/**
 * What one render may write. Partials that include the next one twice, or
 * sections over long lists, multiply a small template: past this the render
 * stops with a 400 rather than hold the thread and the heap.
 */
export const MAX_RENDERED_CHARS = 4 * 1024 * 1024;

class TooLong extends Error {}

class PromptWriter extends Mustache.Writer {
  /** Characters written by the render under way (render() resets it; renders are synchronous). */
  written = 0;

  private count(s: string): string {
    if (s !== undefined && (this.written += s.length) > MAX_RENDERED_CHARS) throw new TooLong();
    return s;
  }

  /** `{{{name}}}`: objects and lists as JSON text, not "[object Object]". */
  override unescapedValue(token: string[], context: Mustache.Context): string {
    const value: unknown = context.lookup(token[1]!);
    if (value === null || value === undefined) return undefined as unknown as string;
    return this.count(typeof value === 'object' ? JSON.stringify(value) : String(value));
  }

  override escapedValue(token: string[], context: Mustache.Context, config?: Mustache.RenderOptions): string {
    return this.count(super.escapedValue(token, context, config));
  }

  override rawValue(token: string[]): string {
    return this.count(super.rawValue(token));
  }
}

const writer = new PromptWriter();
const parsed = new LRUCache<string, object>({ maxSize: PARSED_CHARS, sizeCalculation: (_v, k) => Math.max(1, k.length) });
// The writer's cache is its own property (the package's types leave it out).
(writer as unknown as { templateCache: { get(k: string): unknown; set(k: string, v: object): void; clear(): void } }).templateCache = {
  get: (k) => parsed.get(k),
  set: (k, v) => void parsed.set(k, v),
  clear: () => parsed.clear(),
};

/** The template's kind: a JSON list of messages, or plain text. */
export function templateKind(template: string): TemplateKind {
  return template.trimStart().startsWith('[') ? 'chat' : 'text';
}

/** The inside of a JSON string holding `value`'s text. */
function jsonText(value: unknown): string {
  const s = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return JSON.stringify(s).slice(1, -1);
}

function plainText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

const IN_JSON = { escape: jsonText };
const PLAIN = { escape: plainText };

/** Tokens of a template, or a 400 naming `param` (an unclosed section, a bad tag). */
export function parse(template: string, param: string): Result<Token[]> {
  try {
    return { ok: true, value: writer.parse(template) as unknown as Token[] };
  } catch (e) {
    return { ok: false, error: invalid(`${param}: not a valid Mustache template: ${(e as Error).message}`, param, 'invalid_template') };
  }
}

/** The names of the partials a template's tokens include, sections included. */
export function partialNames(tokens: readonly Token[], into: Set<string> = new Set()): Set<string> {
  for (const t of tokens) {
    if (t[0] === '>') into.add(t[1].trim());
    else if (t[4] !== undefined) partialNames(t[4], into);
  }
  return into;
}

/**
 * Checks a template with its partials and says what it requires. `partials`
 * holds every partial reachable from the template (load.ts finds them); a
 * partial that includes itself, directly or not, is a 400 naming the cycle.
 */
export function prepare(template: string, partials: ReadonlyMap<string, string>): Result<Prepared> {
  const kind = templateKind(template);
  const shown = new Map<string, string>();
  const tokensOf = new Map<string, Token[]>();
  for (const [name, text] of partials) {
    const out = kind === 'chat' ? jsonText(text) : text;
    const tokens = parse(out, `partial '${name}'`);
    if (!tokens.ok) return tokens;
    shown.set(name, out);
    tokensOf.set(name, tokens.value);
  }
  const root = parse(template, 'string');
  if (!root.ok) return root;
  const cycle = findCycle(root.value, tokensOf);
  if (cycle !== null) return { ok: false, error: invalid(`string: partials include each other in a cycle: ${cycle.join(' → ')}`, 'string', 'partial_cycle') };
  const missing = [...partialNames(root.value, new Set())].concat([...tokensOf.values()].flatMap((t) => [...partialNames(t)])).find((n) => !tokensOf.has(n));
  if (missing !== undefined) return { ok: false, error: missingPartial(missing) };
  const required = new Set<string>();
  collectRequired(root.value, tokensOf, required);
  const names = [...required];
  const lookupPartial = (name: string): string | undefined => shown.get(name.trim());
  return { ok: true, value: { kind, template, partials: shown, required: names, requiredPaths: names.map((n) => n.split('.')), lookupPartial } };
}

export function missingPartial(name: string): GatewayError {
  return invalid(`string: partial '${name}' not found (partials are named by slug, or slug@version, in /v1/prompts/partials)`, 'string', 'unknown_partial');
}

/** The render's text, or null past MAX_RENDERED_CHARS. */
function bounded(render: () => string): string | null {
  writer.written = 0;
  try {
    return render();
  } catch (e) {
    if (e instanceof TooLong) return null;
    throw e;
  }
}

/** Variable tags outside sections, following partials included outside sections (each partial once: a partial included twice at each level would double the walk). */
function collectRequired(tokens: readonly Token[], partials: ReadonlyMap<string, Token[]>, into: Set<string>, seen = new Set<string>()): void {
  for (const t of tokens) {
    if (t[0] === 'name' || t[0] === '&') {
      if (t[1] !== '.') into.add(t[1]);
    } else if (t[0] === '>') {
      const name = t[1].trim();
      const p = partials.get(name);
      if (p === undefined || seen.has(name)) continue;
      seen.add(name);
      collectRequired(p, partials, into, seen);
    }
  }
}

/** A path of partial names that comes back to its start, or null. */
function findCycle(root: readonly Token[], partials: ReadonlyMap<string, Token[]>): string[] | null {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (name: string): string[] | null => {
    const at = path.indexOf(name);
    if (at !== -1) return [...path.slice(at), name];
    if (done.has(name)) return null;
    const tokens = partials.get(name);
    if (tokens === undefined) return null;
    path.push(name);
    for (const next of partialNames(tokens)) {
      const found = visit(next);
      if (found !== null) return found;
    }
    path.pop();
    done.add(name);
    return null;
  };
  for (const name of partialNames(root)) {
    const found = visit(name);
    if (found !== null) return found;
  }
  return null;
}

/** The value at a dotted name's path, as Mustache would look it up at the top of the view. */
function lookup(variables: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = variables;
  for (const part of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/**
 * The messages a prepared template renders to with `variables`: a chat
 * template's JSON list, or plain text as one user message. 400s: a required
 * variable without a value (named), a chat template whose result is not a
 * JSON list of messages.
 */
export function render(p: Prepared, variables: Record<string, unknown>): Result<Message[]> {
  for (let i = 0; i < p.required.length; i++) {
    const v = lookup(variables, p.requiredPaths[i]!);
    if (v === undefined || v === null) {
      const name = p.required[i]!;
      return { ok: false, error: invalid(`variables.${name}: the template needs a value for '${name}'`, `variables.${name}`, 'missing_variable') };
    }
  }
  const text = bounded(() => writer.render(p.template, variables, p.lookupPartial, p.kind === 'text' ? PLAIN : IN_JSON));
  if (text === null) return { ok: false, error: invalid(`string: the template renders to more than ${MAX_RENDERED_CHARS} characters (partials or sections repeat it)`, 'string', 'invalid_template') };
  if (p.kind === 'text') return { ok: true, value: [{ role: 'user', content: text }] };
  let messages: unknown;
  try {
    messages = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: invalid(`string: the rendered chat template is not JSON (${(e as Error).message})`, 'string', 'invalid_template') };
  }
  if (!Array.isArray(messages) || !messages.every((m) => typeof m === 'object' && m !== null && !Array.isArray(m) && typeof (m as Message).role === 'string')) {
    return { ok: false, error: invalid('string: a chat template must render to a JSON list of messages, each an object with a role', 'string', 'invalid_template') };
  }
  return { ok: true, value: messages as Message[] };
}
