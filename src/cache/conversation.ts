/**
 * What a semantic lookup compares in a request body. The conversation's turns
 * (user and assistant text; a completion's prompt) are embedded; everything
 * else must be equal and becomes part of the partition: the body without its
 * messages or prompt (model, temperature, tools, stream, …), the system and
 * developer messages, and the order of the roles. System prompts are compared
 * exactly, not embedded: a long one would dominate the vector and make
 * different questions look alike (Portkey leaves them out of the comparison
 * too). A conversation holding anything but text (images, audio, tool calls
 * and results, names) is matched exactly only.
 */

export interface SemanticInput {
  /** The text to embed. */
  text: string;
  /** What two requests must share to be compared at all. */
  exact: unknown;
}

/** About 8k tokens, the input limit of common embedding models; a longer conversation is matched exactly only. */
export const MAX_TEXT_CHARS = 32_000;

/** Null: the request is matched exactly only (not a chat or completion, or not plain text). */
export function semanticInput(body: Record<string, unknown>): SemanticInput | null {
  if (Array.isArray(body.messages)) return chatInput(body, body.messages);
  const prompt = Array.isArray(body.prompt) && body.prompt.length === 1 ? body.prompt[0] : body.prompt;
  if (typeof prompt !== 'string') return null;
  const { prompt: _, ...rest } = body;
  return withText(prompt, { body: rest });
}

function chatInput(body: Record<string, unknown>, messages: unknown[]): SemanticInput | null {
  const { messages: _, ...rest } = body;
  const turns: string[] = [];
  // Each message in order: a system or developer message whole, a turn by its role.
  const shape: unknown[] = [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object') return null;
    const { role, content, ...others } = m as Record<string, unknown>;
    if (role === 'system' || role === 'developer') {
      shape.push(m);
      continue;
    }
    if ((role !== 'user' && role !== 'assistant') || Object.keys(others).length > 0) return null;
    const text = textOf(content);
    if (text === null) return null;
    turns.push(text);
    shape.push(role);
  }
  return withText(turns.join('\n'), { body: rest, shape });
}

function withText(text: string, exact: unknown): SemanticInput | null {
  return text.trim() === '' || text.length > MAX_TEXT_CHARS ? null : { text, exact };
}

/** A string, or content parts that are all text; null for anything else. */
function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts: string[] = [];
  for (const part of content) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (p?.type !== 'text' || typeof p.text !== 'string' || Object.keys(p).length !== 2) return null;
    texts.push(p.text);
  }
  return texts.join('\n');
}
