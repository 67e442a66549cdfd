/**
 * What a request may cost before it is sent, and what it did cost after:
 * tokens (prompt estimated at 4 characters a token, plus the output it may
 * produce: max_tokens, else a default) and, for cost budgets, those tokens at
 * the catalog's price of the requested model. Costs are integer nano-USD so
 * counters add exactly. A model the catalog does not price costs nothing
 * (cost budgets cannot charge what they cannot price; token budgets still do).
 */
import { catalog, type CatalogModel, type Usage } from '../catalog/catalog.js';

/** Output reserved when the request sets no max_tokens. */
export const DEFAULT_OUTPUT_TOKENS = 1024;
const CHARS_PER_TOKEN = 4;
const NANO = 1e9;

/** Tokens and nano-USD; cost is null when the model has no known price. */
export interface Amounts {
  tokens: number;
  cost: number | null;
}

/** The priced model of a request: at its provider when named, else the dearest provider offering that model id. */
export function pricedModel(provider: string | undefined, model: unknown): CatalogModel | null {
  if (typeof model !== 'string') return null;
  if (provider !== undefined) return catalog.find(provider, model);
  let dearest: CatalogModel | null = null;
  for (const m of catalog.models) {
    if (m.model === model && (dearest === null || m.pricing.input + m.pricing.output > dearest.pricing.input + dearest.pricing.output)) dearest = m;
  }
  return dearest;
}

const nanoUsd = (m: CatalogModel | null, usage: Usage): number | null => {
  const usd = m === null ? null : catalog.cost(m.provider, m.model, usage);
  return usd === null ? null : Math.ceil(usd * NANO);
};

/** The most a request may use: its prompt's estimated tokens plus its maximum output. */
export function estimate(body: Record<string, unknown> | null, model: CatalogModel | null): Amounts {
  const input = body === null ? undefined : (body.messages ?? body.input ?? body.prompt);
  const prompt = input === undefined ? 0 : Math.ceil(JSON.stringify(input).length / CHARS_PER_TOKEN);
  const max = body?.max_tokens ?? body?.max_completion_tokens ?? body?.max_output_tokens;
  const output = typeof max === 'number' && Number.isSafeInteger(max) && max >= 0 ? max : DEFAULT_OUTPUT_TOKENS;
  return { tokens: prompt + output, cost: nanoUsd(model, { prompt_tokens: prompt, completion_tokens: output }) };
}

/** What an answer's usage object (OpenAI or Anthropic names) used. */
export function actual(usage: Record<string, unknown>, model: CatalogModel | null): Amounts {
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
  const details = usage.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined;
  const prompt = n(usage.prompt_tokens) + n(usage.input_tokens);
  const completion = n(usage.completion_tokens) + n(usage.output_tokens);
  const tokens = typeof usage.total_tokens === 'number' ? n(usage.total_tokens) : prompt + completion;
  return { tokens, cost: nanoUsd(model, { prompt_tokens: prompt, completion_tokens: completion, prompt_tokens_details: { cached_tokens: n(details?.cached_tokens) } }) };
}
