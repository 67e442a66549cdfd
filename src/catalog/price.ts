/**
 * What a request to a model costs: the integration's own price for that model
 * when it gives one (`pricing_config` of an integration model), else the
 * catalog's price at the provider, times the integration's
 * `pricing_adjustments.multiplier`. One rule for the budget's estimate, its
 * settlement and the logged cost.
 */
import { catalog, usdAt, type Pricing, type Usage } from './catalog.js';

export interface Price {
  readonly pricing: Pricing;
  readonly multiplier: number;
}

/** The price of `model` at `provider`; null when neither the integration nor the catalog prices it. */
export function priceOf(provider: string, model: string, custom: Pricing | null = null, multiplier = 1): Price | null {
  const pricing = custom ?? catalog.find(provider, model)?.pricing ?? null;
  return pricing === null ? null : { pricing, multiplier };
}

/** The catalog's price of a model at a provider not yet known: the dearest provider offering that model id. */
export function dearestPrice(model: string): Price | null {
  let dearest: Pricing | null = null;
  for (const m of catalog.models) {
    if (m.model === model && (dearest === null || m.pricing.input + m.pricing.output > dearest.input + dearest.output)) dearest = m.pricing;
  }
  return dearest === null ? null : { pricing: dearest, multiplier: 1 };
}

/** USD for a request's usage at this price. */
export function usdOf(price: Price, usage: Usage): number {
  return usdAt(price.pricing, usage) * price.multiplier;
}

/** Cents per token (the reference product's unit for custom prices) to USD per million tokens (the catalog's). */
const CENTS_PER_TOKEN_TO_USD_PER_MTOK = 10_000;

/**
 * An integration model's `pricing_config`, the reference product's shape:
 * `{"type": "static", "pay_as_you_go": {"request_token": {"price": c},
 * "response_token": {"price": c}}}`, prices in cents per token. Null when it
 * gives no price (no `pay_as_you_go`); a string naming the bad path when it
 * is malformed.
 */
export function customPricing(config: unknown, path: string): Pricing | null | string {
  const o = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
  const root = o(config);
  if (root === null) return `${path}: must be an object`;
  if (root.type !== undefined && root.type !== 'static') return `${path}.type: must be "static"`;
  if (root.pay_as_you_go === undefined) return null;
  const payg = o(root.pay_as_you_go);
  if (payg === null) return `${path}.pay_as_you_go: must be an object with request_token and response_token prices`;
  const price = (key: string): number | string => {
    const v = o(payg[key])?.price;
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v * CENTS_PER_TOKEN_TO_USD_PER_MTOK : `${path}.pay_as_you_go.${key}.price: must be a number ≥ 0 (cents per token)`;
  };
  const input = price('request_token');
  if (typeof input === 'string') return input;
  const output = price('response_token');
  if (typeof output === 'string') return output;
  return { input, output, cachedInput: null };
}
