/**
 * default.addPrefix, a transform before the request: chat, the first message
 * of `applyToRole` (default user) gets `prefix` before its text (a string, or
 * the first text part; else a text part is put first), or with
 * `addToExisting: false` a new message of that role with the prefix goes
 * before it; with `onlyIfEmpty`, only a message without content is changed;
 * no message of the role: a new one, first for system, else last.
 * Completions: the prompt's first text. Embeddings: nothing. Always passes.
 */
import { bool, enumOf, nonEmptyStr, optional } from '../../shared/json-schema.js';
import { asIs, type CheckDefinition, type Verdict } from '../check.js';

type Role = 'user' | 'system' | 'assistant';

interface Prefix {
  prefix: string;
  applyToRole?: Role;
  addToExisting?: boolean;
  onlyIfEmpty?: boolean;
}

export const addPrefix: CheckDefinition<Prefix> = {
  hooks: ['before'],
  parameters: {
    prefix: nonEmptyStr,
    ...optional({ applyToRole: enumOf<Role>(['user', 'system', 'assistant'], 'one of user, system, assistant'), addToExisting: bool, onlyIfEmpty: bool }),
  },
  prepare: asIs,
  run(s, p): Verdict {
    if (s.endpoint === 'embeddings') return { verdict: true, explanation: 'embeddings take no prefix' };
    if (s.endpoint === 'completions') {
      return s.texts.length === 0
        ? { verdict: true, explanation: 'the prompt has no text' }
        : { verdict: true, explanation: 'the prefix was added to the prompt', texts: [p.prefix + s.texts[0]!, ...s.texts.slice(1)] };
    }
    const role = p.applyToRole ?? 'user';
    const messages = [...(s.request.messages as Record<string, unknown>[])];
    const i = messages.findIndex((m) => m.role === role);
    const fresh = { role, content: p.prefix };
    if (i === -1) {
      if (role === 'system') messages.unshift(fresh);
      else messages.push(fresh);
    } else if (p.onlyIfEmpty === true && !isEmpty(messages[i]!.content)) {
      return { verdict: true, explanation: `the ${role} message has content: no prefix added` };
    } else if (p.addToExisting === false) messages.splice(i, 0, fresh);
    else messages[i] = { ...messages[i], content: prefixed(p.prefix, messages[i]!.content) };
    return { verdict: true, explanation: `the prefix was added to the ${role} message`, request: { ...s.request, messages } };
  },
};

function isEmpty(content: unknown): boolean {
  return content == null || (typeof content === 'string' && content.trim() === '') || (Array.isArray(content) && content.length === 0);
}

function prefixed(prefix: string, content: unknown): unknown {
  if (content == null || typeof content === 'string') return prefix + (content ?? '');
  if (!Array.isArray(content)) return content;
  const first = content[0] as Record<string, unknown> | undefined;
  if (first?.type === 'text' && typeof first.text === 'string') return [{ ...first, text: prefix + first.text }, ...content.slice(1)];
  return [{ type: 'text', text: prefix }, ...content];
}
