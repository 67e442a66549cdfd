/**
 * Which publisher serves a model on Vertex AI, and how it is called. Vertex
 * hosts some vendors' models under
 * `…/publishers/{publisher}/models/{model}:{method}`, each with its own body:
 * Google's Gemini (generateContent, predict for embeddings), Anthropic's
 * Claude (rawPredict / streamRawPredict with an Anthropic Messages body).
 * Open models (Meta's Llama, DeepSeek, Qwen…) are served instead by its
 * OpenAI-compatible endpoint, `…/endpoints/openapi/chat/completions`, the
 * body's model naming them `{publisher}/{model}`.
 *
 * A model id may name its publisher, as the reference product takes them:
 * `anthropic.claude-3-5-haiku@20241022`, `google.gemini-2.5-flash`,
 * `meta.llama-3.3-70b-instruct-maas`. A bare id is Google's, unless its
 * prefix says otherwise (`claude-…`). Adding a publisher is one row of
 * NAMED, BY_PREFIX or OPEN_MODEL_PUBLISHERS.
 */
import type { Translators } from '../contract.js';
import { geminiChat, geminiMethod } from '../google/chat/request.js';
import { claudeOnVertex } from './chat/request.js';
import { predictEmbeddings } from './embeddings.js';

export interface Publisher {
  /** The `publishers/{name}` path segment. */
  name: string;
  /** Its translators; an endpoint without one is one its models do not serve. */
  translators: Translators;
  /** The model method and its query for a chat request (`streamGenerateContent?alt=sse`). */
  chatMethod: (body: Record<string, unknown>) => string;
}

/** Google's models: the Gemini API's bodies; embeddings through `predict`. */
export const GOOGLE: Publisher = {
  name: 'google',
  translators: { chat: geminiChat('vertex-ai'), embeddings: predictEmbeddings },
  chatMethod: geminiMethod,
};

/** Anthropic's Claude models: rawPredict / streamRawPredict with Anthropic's Messages body; no embedding models. */
export const ANTHROPIC: Publisher = {
  name: 'anthropic',
  translators: { chat: claudeOnVertex },
  chatMethod: (body) => (body.stream === true ? 'streamRawPredict' : 'rawPredict'),
};

/** Publishers a model id may name before a dot, with a body of their own. */
const NAMED: ReadonlyMap<string, Publisher> = new Map([GOOGLE, ANTHROPIC].map((p) => [p.name, p]));

/** Bare model-id prefixes of other publishers than Google. */
const BY_PREFIX: readonly (readonly [string, Publisher])[] = [['claude-', ANTHROPIC]];

/** Publishers of the open models Vertex serves through its OpenAI-compatible endpoint (Model Garden's MaaS). */
const OPEN_MODEL_PUBLISHERS: ReadonlySet<string> = new Set(['meta', 'deepseek-ai', 'qwen', 'openai', 'zai-org']);

/** A publisher's own method and the model as its URL names it, or an open model as the OpenAI-compatible body names it. */
export type ModelRoute = { kind: 'publisher'; publisher: Publisher; model: string } | { kind: 'open'; model: string };

export function routeOf(model: string): ModelRoute {
  const dot = model.indexOf('.');
  if (dot > 0 && dot < model.length - 1) {
    const name = model.slice(0, dot);
    const named = NAMED.get(name);
    if (named !== undefined) return { kind: 'publisher', publisher: named, model: model.slice(dot + 1) };
    if (OPEN_MODEL_PUBLISHERS.has(name)) return { kind: 'open', model: `${name}/${model.slice(dot + 1)}` };
  }
  return { kind: 'publisher', publisher: BY_PREFIX.find(([prefix]) => model.startsWith(prefix))?.[1] ?? GOOGLE, model };
}
