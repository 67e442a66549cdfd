/**
 * GET /v1/models: the catalog as an OpenAI model list (`data` of `object: "model"`,
 * which the OpenAI SDK's `models.list()` reads), filtered by `provider`, `mode`
 * and `search` (substring of the id), paged by `limit` and the `after` cursor.
 * Ids are `provider/model`: the same model id exists at several providers, and a
 * cursor must name one entry. `total_count` is the filtered total (spec 1.15.0).
 */
import { Type } from '@sinclair/typebox';
import { canonicalProvider, isKnownProvider } from '../providers/registry.js';
import { queryChecker } from '../shared/checker.js';
import { invalid, ok, type GatewayError, type Result } from '../shared/errors.js';
import { catalog as defaultCatalog, MODES, type CatalogModel, type Mode, type ModelCatalog } from './catalog.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  provider: string;
  model: string;
  mode: Mode;
  context_window: number | null;
  max_output_tokens: number | null;
  /** USD per million tokens. */
  pricing: { input: number; output: number; cached_input: number | null };
  deprecation_date: string | null;
}

export interface ModelList {
  object: 'list';
  data: ModelObject[];
  total_count: number;
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export function listModels(params: URLSearchParams, source: ModelCatalog = defaultCatalog): Result<ModelList> {
  const query = parseQuery(params, source);
  if (!query.ok) return query;
  const { provider, mode, search, limit, after } = query.value;
  const matches = source.models.filter(
    (m) => (provider === undefined || m.provider === provider) && (mode === undefined || m.mode === mode) && (search === undefined || m.id.toLowerCase().includes(search)),
  );
  // The cursor is a position in the whole catalog, so it holds even when the filters change between pages.
  const start = after === undefined ? 0 : matches.findIndex((m) => source.position(m.id) > after);
  const rest = start === -1 ? [] : matches.slice(start);
  // Models have no release date in the data: `created` is the day the catalog's prices were read.
  const created = Math.floor(Date.parse(source.asOf) / 1000);
  const data = rest.slice(0, limit).map((m) => modelObject(m, created));
  return ok({
    object: 'list',
    data,
    total_count: matches.length,
    has_more: rest.length > limit,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  });
}

interface Query {
  provider?: string;
  mode?: Mode;
  search?: string;
  limit: number;
  /** Catalog position of the `after` id. */
  after?: number;
}

/** The query GET /v1/models takes, as the OpenAPI document shows it; apply() reads each value. */
export const MODELS_QUERY = queryChecker<Partial<Record<QueryName, string>>>(
  Type.Object({
    provider: Type.Optional(Type.String({ description: 'a provider name (aliases accepted)' })),
    mode: Type.Optional(Type.String({ description: `one of ${MODES.join(', ')}` })),
    search: Type.Optional(Type.String({ description: 'a substring of the model id, any case' })),
    limit: Type.Optional(Type.String({ description: `page size, 1 to ${MAX_LIMIT}, default ${DEFAULT_LIMIT}` })),
    after: Type.Optional(Type.String({ description: 'the last id of the previous page' })),
  }),
);

type QueryName = 'provider' | 'mode' | 'search' | 'limit' | 'after';

function parseQuery(params: URLSearchParams, source: ModelCatalog): Result<Query> {
  const values = MODELS_QUERY(params);
  if (!values.ok) return values;
  const query: Query = { limit: DEFAULT_LIMIT };
  for (const [name, value] of Object.entries(values.value) as [QueryName, string][]) {
    const error = NAMES.has(name) ? apply(query, name, value, source) : null;
    if (error !== null) return { ok: false, error };
  }
  return ok(query);
}

const NAMES: ReadonlySet<string> = new Set<QueryName>(['provider', 'mode', 'search', 'limit', 'after']);

function apply(query: Query, name: QueryName, value: string, source: ModelCatalog): GatewayError | null {
  switch (name) {
    case 'provider': {
      // A provider the gateway serves but the catalog has no models of (ollama, vllm…) lists nothing; an unknown name is a mistake.
      const provider = canonicalProvider(value);
      if (!source.hasProvider(provider) && !isKnownProvider(provider)) return invalid(`unknown provider '${value}'`, 'provider', 'unknown_provider');
      query.provider = provider;
      return null;
    }
    case 'mode':
      if (!MODES.includes(value as Mode)) return invalid(`invalid mode '${value}': one of ${MODES.join(', ')}`, 'mode');
      query.mode = value as Mode;
      return null;
    case 'search':
      query.search = value.toLowerCase();
      return null;
    case 'limit': {
      const limit = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
      if (!(limit >= 1 && limit <= MAX_LIMIT)) return invalid(`invalid limit '${value}': an integer from 1 to ${MAX_LIMIT}`, 'limit');
      query.limit = limit;
      return null;
    }
    case 'after': {
      const position = source.position(value);
      if (position === -1) return invalid(`invalid after '${value}': no model with this id in the catalog`, 'after');
      query.after = position;
      return null;
    }
  }
}

function modelObject(m: CatalogModel, created: number): ModelObject {
  return {
    id: m.id,
    object: 'model',
    created,
    owned_by: m.provider,
    provider: m.provider,
    model: m.model,
    mode: m.mode,
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    pricing: { input: m.pricing.input, output: m.pricing.output, cached_input: m.pricing.cachedInput },
    deprecation_date: m.deprecationDate,
  };
}
