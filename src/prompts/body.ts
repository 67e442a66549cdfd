/**
 * The chat request a prompt makes (spec: Rendered prompt): the version's
 * `parameters` and `model`, then the call's hyperparameters, given at the
 * root of the call beside `variables` (never nested), which win; `messages`
 * are the rendered template's, followed by any the call sends (a
 * conversation going on from the prompt). `max_tokens`, deprecated, is
 * carried as `max_completion_tokens` (the name every provider's translator
 * reads; Azure's turns it back); where both are given,
 * `max_completion_tokens` wins.
 */
import { invalid, ok, type Result } from '../shared/errors.js';
import type { LoadedPrompt } from './load.js';
import { render, type Message } from './render.js';

export type ChatBody = Record<string, unknown> & { messages: Message[] };

/** The call's `variables`: an object, or none. */
export function variablesOf(call: Record<string, unknown>): Result<Record<string, unknown>> {
  const v = call.variables;
  if (v === undefined || v === null) return ok({});
  if (typeof v !== 'object' || Array.isArray(v)) return { ok: false, error: invalid('variables: must be an object of values to substitute', 'variables') };
  return ok(v as Record<string, unknown>);
}

export function renderedBody(loaded: LoadedPrompt, call: Record<string, unknown>): Result<ChatBody> {
  const variables = variablesOf(call);
  if (!variables.ok) return variables;
  const messages = render(loaded.prepared, variables.value);
  if (!messages.ok) return messages;
  const { variables: _variables, messages: more, ...hyper } = call;
  if (more !== undefined && !Array.isArray(more)) return { ok: false, error: invalid('messages: must be a list of messages that follow the prompt\'s', 'messages') };
  const v = loaded.version;
  const body: Record<string, unknown> = { ...newLimitName(v.parameters), ...(v.model === null ? {} : { model: v.model }), ...newLimitName(hyper) };
  return ok({ ...body, messages: more === undefined ? messages.value : [...messages.value, ...(more as Message[])] });
}

/** `max_tokens` as `max_completion_tokens`, within one source (the call's then wins over the version's whichever name each used). */
function newLimitName(params: Record<string, unknown>): Record<string, unknown> {
  if (params.max_tokens === undefined) return params;
  const { max_tokens: limit, ...rest } = params;
  return { ...rest, max_completion_tokens: rest.max_completion_tokens ?? limit };
}
