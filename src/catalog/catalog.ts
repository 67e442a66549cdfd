/**
 * The model catalog: models.json (per provider: context window, max output
 * tokens, USD prices per million tokens, and where the facts come from), read
 * and checked once when the gateway starts, then model lookups and the cost of
 * a request's usage.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { canonicalProvider } from '../providers/registry.js';

export const MODES = ['chat', 'completion', 'embedding'] as const;
export type Mode = (typeof MODES)[number];

/** USD per million tokens. */
export interface Pricing {
  readonly input: number;
  readonly output: number;
  /** null: no cache discount known, cached tokens cost `input`. */
  readonly cachedInput: number | null;
}

export interface CatalogModel {
  /** `provider/model`: unique across the catalog (the same model id exists at several providers). */
  readonly id: string;
  readonly provider: string;
  /** The id the provider takes in a request's `model`. */
  readonly model: string;
  readonly mode: Mode;
  /** Tokens; null where the source does not say. */
  readonly contextWindow: number | null;
  readonly maxOutputTokens: number | null;
  readonly pricing: Pricing;
  /** YYYY-MM-DD the provider retires (or retired) the model. */
  readonly deprecationDate: string | null;
}

/** Token counts in OpenAI's `usage` shape, which every adapter answers in: prompt tokens include the cached ones. */
export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

export class ModelCatalog {
  private readonly byProvider = new Map<string, Map<string, CatalogModel>>();
  private readonly positions = new Map<string, number>();

  /** `asOf`: the date the prices were read (YYYY-MM-DD); `models` in file order. */
  constructor(
    readonly asOf: string,
    readonly models: readonly CatalogModel[],
  ) {
    models.forEach((m, i) => {
      let provider = this.byProvider.get(m.provider);
      if (provider === undefined) this.byProvider.set(m.provider, (provider = new Map()));
      provider.set(m.model, m);
      this.positions.set(m.id, i);
    });
  }

  hasProvider(name: string): boolean {
    return this.byProvider.has(canonicalProvider(name));
  }

  /** Index of a catalog id in `models`, or -1. */
  position(id: string): number {
    return this.positions.get(id) ?? -1;
  }

  /** Exact model id at a provider (or its cloud alias); for Bedrock also an ARN ending in a known id. */
  find(provider: string, model: string): CatalogModel | null {
    const name = canonicalProvider(provider);
    const models = this.byProvider.get(name);
    if (models === undefined) return null;
    const hit = models.get(model);
    if (hit !== undefined || name !== 'bedrock' || !model.startsWith('arn:')) return hit ?? null;
    // Foundation-model and inference-profile ARNs end in the model id after their last '/'.
    return models.get(model.slice(model.lastIndexOf('/') + 1)) ?? null;
  }

  /** USD for a request's usage: cached prompt tokens at the cached price, the rest at the input price. Null: model unknown. */
  cost(provider: string, model: string, usage: Usage): number | null {
    const found = this.find(provider, model);
    return found === null ? null : usdAt(found.pricing, usage);
  }
}

/** USD for a request's usage at these prices: cached prompt tokens at the cached price, the rest at the input price. */
export function usdAt(pricing: Pricing, usage: Usage): number {
  const { input, output, cachedInput } = pricing;
  const prompt = usage.prompt_tokens ?? 0;
  const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, prompt);
  return ((prompt - cached) * input + cached * (cachedInput ?? input) + (usage.completion_tokens ?? 0) * output) / 1_000_000;
}

/** Checks the file's shape; a bad entry throws an Error naming it, so the gateway refuses to start. */
export function parseCatalog(raw: unknown, origin: string): ModelCatalog {
  const fail = (path: string, problem: string): never => {
    throw new Error(`model catalog ${origin}: ${path} ${problem}`);
  };
  const root = object(raw) ?? fail('the file', 'must be a JSON object');
  const meta = object(root._meta) ?? fail('_meta', 'must be an object');
  const asOf = isDate(meta.as_of) ? meta.as_of : fail('_meta.as_of', 'must be a date YYYY-MM-DD');
  const providers = object(root.providers) ?? fail('providers', 'must be an object');

  const models: CatalogModel[] = [];
  for (const [provider, entries] of Object.entries(providers)) {
    const at = `providers[${JSON.stringify(provider)}]`;
    if (provider === '') fail(at, 'has an empty provider name');
    if (canonicalProvider(provider) !== provider) fail(at, `is an alias: use ${canonicalProvider(provider)}`);
    for (const [model, value] of Object.entries(object(entries) ?? fail(at, 'must be an object of models'))) {
      const path = `${at}[${JSON.stringify(model)}]`;
      if (model === '') fail(path, 'has an empty model id');
      const entry = object(value) ?? fail(path, 'must be an object');
      for (const key of Object.keys(entry)) if (!ENTRY_KEYS.has(key)) fail(`${path}.${key}`, 'is not a known field');
      const pricing = object(entry.pricing) ?? fail(`${path}.pricing`, 'must be an object');
      for (const key of Object.keys(pricing)) if (!PRICING_KEYS.has(key)) fail(`${path}.pricing.${key}`, 'is not a known field');
      const price = (key: string, orNull = ''): number => {
        const v = pricing[key];
        return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fail(`${path}.pricing.${key}`, `must be a number ≥ 0${orNull}`);
      };
      const tokens = (key: string): number | null => {
        const v = entry[key];
        return v === null || (Number.isInteger(v) && (v as number) > 0) ? (v as number | null) : fail(`${path}.${key}`, 'must be a positive integer or null');
      };
      const deprecation = entry.deprecation_date;
      models.push({
        id: `${provider}/${model}`,
        provider,
        model,
        mode: MODES.includes(entry.mode as Mode) ? (entry.mode as Mode) : fail(`${path}.mode`, `must be one of ${MODES.join(', ')}`),
        contextWindow: tokens('context_window'),
        maxOutputTokens: tokens('max_output_tokens'),
        pricing: { input: price('input'), output: price('output'), cachedInput: pricing.cached_input === null ? null : price('cached_input', ' or null') },
        deprecationDate: deprecation === undefined ? null : isDate(deprecation) ? deprecation : fail(`${path}.deprecation_date`, 'must be a date YYYY-MM-DD'),
      });
    }
  }
  return new ModelCatalog(asOf, models);
}

export function loadCatalog(file: string): ModelCatalog {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`model catalog ${file}: ${(err as Error).message}`);
  }
  return parseCatalog(raw, file);
}

const ENTRY_KEYS = new Set(['mode', 'context_window', 'max_output_tokens', 'pricing', 'deprecation_date']);
const PRICING_KEYS = new Set(['input', 'output', 'cached_input']);

function object(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function isDate(v: unknown): v is string {
  return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v));
}

/**
 * The file is read from src/, not dist/: tsc copies only JSON that code imports,
 * and JSON imports are still experimental on Node 20. This module runs from
 * dist/src/catalog/, three levels below the project root.
 */
export const CATALOG_FILE = fileURLToPath(new URL('../../../src/catalog/models.json', import.meta.url));

/** Loaded when the gateway starts: a malformed file stops it there, not at the first request. */
export const catalog = loadCatalog(CATALOG_FILE);

export const findModel = (provider: string, model: string): CatalogModel | null => catalog.find(provider, model);
export const cost = (provider: string, model: string, usage: Usage): number | null => catalog.cost(provider, model, usage);
