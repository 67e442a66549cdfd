/**
 * What a request may cost before it is sent, and what it did cost after:
 * tokens (prompt estimated at 4 characters a token, plus the output it may
 * produce: max_tokens, else a default) and, for cost budgets, those tokens at
 * the price of the model sent (catalog/price.ts). Costs are integer nano-USD so
 * counters add exactly. A model with no known price costs nothing here: cost
 * budgets refuse a request naming one (budgets.ts); token budgets still count it.
 */
import type { Usage } from '../catalog/catalog.js';
import { usdOf, type Price } from '../catalog/price.js';

/** Output reserved when the request sets no max_tokens. */
export const DEFAULT_OUTPUT_TOKENS = 1024;
const CHARS_PER_TOKEN = 4;
const NANO = 1e9;

/** Tokens and nano-USD; cost is null when the model has no known price. */
export interface Amounts {
  tokens: number;
  cost: number | null;
}

/** A request's estimate before it is sent, with the model it may send that has no known price (null: none). */
export interface Demand extends Amounts {
  unpriced: string | null;
}

const nanoUsd = (price: Price | null, usage: Usage): number | null => (price === null ? null : Math.ceil(usdOf(price, usage) * NANO));

/** What of a body its prompt tokens are estimated from (null: none). */
export function promptOf(body: Record<string, unknown> | null): unknown {
  return body === null ? undefined : (body.messages ?? body.input ?? body.prompt);
}

/** A prompt's estimated tokens: its JSON at 4 characters a token. */
export function promptTokens(input: unknown): number {
  return input === undefined ? 0 : Math.ceil(JSON.stringify(input).length / CHARS_PER_TOKEN);
}

/** The most a request may use: its prompt's estimated tokens (given, when already counted) plus its maximum output. */
export function estimate(body: Record<string, unknown> | null, price: Price | null, prompt = promptTokens(promptOf(body))): Amounts {
  const max = body?.max_tokens ?? body?.max_completion_tokens ?? body?.max_output_tokens;
  const output = typeof max === 'number' && Number.isSafeInteger(max) && max >= 0 ? max : DEFAULT_OUTPUT_TOKENS;
  return { tokens: prompt + output, cost: nanoUsd(price, { prompt_tokens: prompt, completion_tokens: output }) };
}

/** What an answer's usage object (OpenAI or Anthropic names) used. */
export function actual(usage: Record<string, unknown>, price: Price | null): Amounts {
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
  const details = usage.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined;
  const prompt = n(usage.prompt_tokens) + n(usage.input_tokens);
  const completion = n(usage.completion_tokens) + n(usage.output_tokens);
  const tokens = typeof usage.total_tokens === 'number' ? n(usage.total_tokens) : prompt + completion;
  return { tokens, cost: nanoUsd(price, { prompt_tokens: prompt, completion_tokens: completion, prompt_tokens_details: { cached_tokens: n(details?.cached_tokens) } }) };
}
