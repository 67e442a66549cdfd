/**
 * What text a check sees, and where a transform's text goes back.
 *
 * Before the request (input): chat, the last message whose role is `user`
 * (its string content, or each `text` part of an array content); completions,
 * the prompt (a string, or each string of an array); embeddings, the input
 * (a string, or each string of an array; token arrays have no text).
 * After the request (output): the whole answer — every choice's
 * `message.content` (chat) or `text` (completions), a part per choice.
 * The generic proxy's POST /v1/responses: its `input` (a string, or the
 * last user item's text parts, as a chat message) before; after, the text
 * parts of its `message` output items.
 * A hook's `scope: "all_messages"` widens a chat request's text to every
 * message's, in order (system, user, assistant and tool alike).
 * A check reads the parts joined by newlines; a transform returns one new
 * text per part and it is written back in the same place.
 */
import type { HookEndpoint, HookKind } from './check.js';

type Json = Record<string, unknown>;

/** What a hook judges of a chat request: its last user message (the default) or every message. */
export const TEXT_SCOPES = ['last_user_message', 'all_messages'] as const;
export type TextScope = (typeof TEXT_SCOPES)[number];

/** The text parts of `json`: the request's (before) or the answer's (after). */
export function textsOf(kind: HookKind, endpoint: HookEndpoint, json: Readonly<Json>, scope: TextScope = 'last_user_message'): string[] {
  return slots(kind, endpoint, json, scope).map((s) => s.get());
}

/** A copy of `json` with its text parts replaced by `texts`, in order; parts beyond `texts` are kept. */
export function withTexts(kind: HookKind, endpoint: HookEndpoint, json: Readonly<Json>, texts: readonly string[], scope: TextScope = 'last_user_message'): Json {
  const copy = structuredClone(json) as Json;
  slots(kind, endpoint, copy, scope).forEach((slot, i) => {
    const text = texts[i];
    if (text !== undefined) slot.set(text);
  });
  return copy;
}

/** The index of the last user message of a chat body; -1 when there is none. */
export function lastUserMessage(messages: unknown): number {
  if (!Array.isArray(messages)) return -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown } | null;
    if (typeof m === 'object' && m !== null && m.role === 'user') return i;
  }
  return -1;
}

interface Slot {
  get(): string;
  set(text: string): void;
}

function slots(kind: HookKind, endpoint: HookEndpoint, json: Json, scope: TextScope): Slot[] {
  if (endpoint === 'responses') return kind === 'before' ? responsesInput(json, scope) : responsesOutput(json);
  if (kind === 'before') {
    if (endpoint === 'chat') return messageSlots(json.messages, scope);
    return stringsOf(json, endpoint === 'completions' ? 'prompt' : 'input');
  }
  const choices = Array.isArray(json.choices) ? (json.choices as unknown[]) : [];
  return choices.flatMap((c): Slot[] => {
    if (typeof c !== 'object' || c === null) return [];
    if (endpoint === 'completions') return stringsOf(c as Json, 'text');
    const message = (c as Json).message;
    if (typeof message !== 'object' || message === null) return [];
    const m = message as Json;
    // A message without text (tool calls only) is an empty part, so each choice keeps its place.
    return typeof m.content === 'string' || m.content === null || m.content === undefined
      ? [{ get: () => (typeof m.content === 'string' ? m.content : ''), set: (t) => void (m.content = t) }]
      : contentSlots(m);
  });
}

/** The last user message's text parts, or every message's (scope all_messages). */
function messageSlots(messages: unknown, scope: TextScope): Slot[] {
  if (!Array.isArray(messages)) return [];
  if (scope === 'all_messages') return messages.flatMap((m: unknown) => (typeof m === 'object' && m !== null ? contentSlots(m as Json) : []));
  const i = lastUserMessage(messages);
  return i === -1 ? [] : contentSlots(messages[i] as Json);
}

/** A Responses request's `input`: a string, or its items read as chat messages are. */
function responsesInput(json: Json, scope: TextScope): Slot[] {
  return typeof json.input === 'string' ? stringsOf(json, 'input') : messageSlots(json.input, scope);
}

/** A Responses answer's text: each `output_text` part of its `message` output items. */
function responsesOutput(json: Json): Slot[] {
  if (!Array.isArray(json.output)) return [];
  return (json.output as unknown[]).flatMap((item) => {
    const o = item as Json | null;
    return typeof o === 'object' && o !== null && o.type === 'message' ? contentSlots(o) : [];
  });
}

/** The part types that carry text: chat's `text`, the Responses API's `input_text` and `output_text`. */
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);

/** A message's string content, or each text part of its array content. */
function contentSlots(message: Json): Slot[] {
  const content = message.content;
  if (typeof content === 'string') return [{ get: () => message.content as string, set: (t) => void (message.content = t) }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): Slot[] => {
    const p = part as Json | null;
    return typeof p === 'object' && p !== null && TEXT_PARTS.has(p.type as string) && typeof p.text === 'string'
      ? [{ get: () => p.text as string, set: (t) => void (p.text = t) }]
      : [];
  });
}

/** A string field, or each string of an array field. */
function stringsOf(json: Json, key: string): Slot[] {
  const v = json[key];
  if (typeof v === 'string') return [{ get: () => json[key] as string, set: (t) => void (json[key] = t) }];
  if (!Array.isArray(v)) return [];
  return v.flatMap((item, i): Slot[] => (typeof item === 'string' ? [{ get: () => v[i] as string, set: (t) => void (v[i] = t) }] : []));
}
