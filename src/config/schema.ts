/**
 * Validation of the Config object (spec "Config object"). `parseConfig` is the
 * only producer of `Config` values; `parseConfigHeader` adds JSON parsing and a
 * memo so the x-gateway-config header, which repeats on every request, is
 * validated once.
 *
 * Shapes and types are a JSON Schema checked by ajv (the library that already
 * validates request bodies, so the process loads one schema library); rules
 * that relate several fields run afterwards in plain code.
 */
import type { SchemaObject } from 'ajv';
import { validateQuery } from './query.js';
import { parsePath } from '../shared/dot-path.js';
import { err, invalid, ok, type GatewayError, type Result } from '../shared/errors.js';
import { ajv, formatPath, schemaError, schemaProblem, type SchemaPath as Path, type SchemaProblem as Problem } from '../shared/json-schema.js';
import type { CacheConfig, Config, ConfigNode, Strategy } from './types.js';

const HEADER = 'x-gateway-config';
const MEMO_SIZE = 256;

// Every schema that can fail carries `message`: the text after "config.<path>: ".
const must = (what: string): SchemaObject => ({ message: `must be ${what}` });

/** `base` with one more constraint that has its own, more specific message. */
const refine = (base: SchemaObject, constraint: SchemaObject, message: string): SchemaObject => ({
  ...base,
  allOf: [{ ...constraint, message }],
});

const str: SchemaObject = { type: 'string', ...must('a string') };
const nonEmptyStr = refine(str, { minLength: 1 }, 'must be a non-empty string');
const bool: SchemaObject = { type: 'boolean', ...must('a boolean') };
const number: SchemaObject = { type: 'number', ...must('a number') };
const jsonObject: SchemaObject = { type: 'object', additionalProperties: { $ref: '#/$defs/json' }, ...must('a JSON object') };
const enumOf = (values: string[], what: string): SchemaObject => ({ enum: values, ...must(what) });

function int(minimum: number, maximum?: number): SchemaObject {
  const what = maximum === undefined ? `an integer of at least ${minimum}` : `an integer between ${minimum} and ${maximum}`;
  // Larger integers are not exact in a JS number.
  return { type: 'integer', minimum, maximum: maximum ?? Number.MAX_SAFE_INTEGER, ...must(what) };
}

const num = (minimum: number): SchemaObject => ({ type: 'number', minimum, ...must(`a number of at least ${minimum}`) });

/** A key that a sibling schema allows but this one must not carry. */
const notAllowed = (reason: string): SchemaObject => ({ not: {}, message: reason });

/** An object schema: only the listed keys, `required` among them. */
const object = (properties: Record<string, SchemaObject>, required: string[], what = 'an object'): SchemaObject => ({
  type: 'object',
  properties,
  required,
  additionalProperties: notAllowed('unknown key'),
  ...must(what),
});

const arrayOf = (items: SchemaObject, what: string): SchemaObject => ({ type: 'array', items, ...must(what) });

const statusCodes = arrayOf(int(100, 599), 'an array of HTTP status codes');
// The spec's parameter table types retry codes as strings, so "429" counts as 429:
// a string passes when its number (Number() ignores leading zeros) is 100–599.
// parseConfig converts them after validation.
const retryStatusCodes = arrayOf(
  { ...int(100, 599), type: ['integer', 'string'], pattern: /^0*[1-5]\d\d$/.source },
  'an array of HTTP status codes',
);

// RFC 9110 token characters.
const headerName = refine(str, { pattern: /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.source }, 'must be an HTTP header name');
/** custom_host is joined with the endpoint path as given, so it must be an exact http(s) URL. */
export function isHttpUrl(value: string): boolean {
  return value === value.trim() && /^https?:\/\//i.test(value) && URL.canParse(value);
}

const strategy = object(
  {
    mode: enumOf(['single', 'loadbalance', 'fallback', 'conditional'], 'one of single, loadbalance, fallback, conditional'),
    conditions: {
      ...arrayOf(object({ query: jsonObject, then: str }, ['query', 'then'], 'an object {query, then}'), 'a non-empty array'),
      minItems: 1,
    },
    default: str,
    on_status_codes: statusCodes,
  },
  ['mode'],
);

const retry = object({ attempts: int(0, 5), on_status_codes: retryStatusCodes, use_retry_after_headers: bool }, ['attempts']);

const cbConfig = object(
  { failure_threshold: num(1), cooldown_interval: num(30000), failure_status_codes: statusCodes },
  ['failure_threshold', 'cooldown_interval'],
);

const feedback = object({ value: number, weight: number, metadata: jsonObject }, []);

const outcome = (denyReason: string | null): SchemaObject =>
  object({ feedback, deny: denyReason === null ? bool : notAllowed(denyReason) }, []);

const hookCheck = object({ id: str, parameters: jsonObject }, ['id', 'parameters'], 'an object {id, parameters}');

function hooks(kind: 'before' | 'after'): SchemaObject {
  const on = outcome(kind === 'before' ? null : 'is only allowed in before_request_hooks');
  const hook = object(
    {
      id: str,
      type: str,
      async: kind === 'after' ? bool : notAllowed('is only allowed in after_request_hooks'),
      checks: arrayOf(hookCheck, 'an array'),
      on_fail: on,
      on_success: on,
    },
    ['id'],
  );
  return arrayOf(hook, 'an array');
}

function guardrails(kind: 'input' | 'output'): SchemaObject {
  const on = outcome(kind === 'output' ? null : 'is only allowed in output_guardrails');
  // An id, or an object whose keys besides these name checks (e.g. default.regexMatch)
  // and carry their parameters. Object keywords do not apply to strings.
  const guardrail: SchemaObject = {
    type: ['string', 'object'],
    properties: { id: str, deny: bool, async: bool, on_fail: on, on_success: on },
    additionalProperties: { ...jsonObject, message: 'must be an object of check parameters' },
    ...must('a guardrail id or an object'),
  };
  return arrayOf(guardrail, 'an array');
}

const deployment = object(
  { deployment_id: str, alias: str, api_version: str, is_default: bool },
  ['deployment_id', 'alias', 'api_version'],
);

const nodeProperties: Record<string, SchemaObject> = {
  strategy,
  targets: refine(arrayOf({ $ref: '#/$defs/node' }, 'a non-empty array of config objects'), { minItems: 1 }, 'must be a non-empty array'),
  name: str,
  provider: nonEmptyStr,
  api_key: str,
  virtual_key: nonEmptyStr,
  custom_host: { type: 'string', format: 'http-url', ...must('an http(s) URL') },
  strict_compat_compliance: bool,
  resource_name: str,
  deployment_id: str,
  api_version: str,
  deployments: arrayOf(deployment, 'an array'),
  override_params: jsonObject,
  default_params: jsonObject,
  drop_params: arrayOf(str, 'an array of dot paths'),
  prompt_id: str,
  request_timeout: int(1),
  // Defined below: its embedding target reuses these schemas.
  cache: { $ref: '#/$defs/cache' },
  retry,
  cb_config: cbConfig,
  weight: num(0),
  on_status_codes: statusCodes,
  passthrough: bool,
  forward_headers: arrayOf(headerName, 'an array of header names'),
  before_request_hooks: hooks('before'),
  after_request_hooks: hooks('after'),
  input_guardrails: guardrails('input'),
  output_guardrails: guardrails('output'),
  cloud1_access_key_id: str,
  cloud1_secret_access_key: str,
  cloud1_region: str,
  cloud1_session_token: str,
  vendor_organization: str,
  vendor_project: str,
  cloud2_project_id: str,
  cloud2_region: str,
  cloud2_service_account_json: jsonObject,
  cloud3_region: str,
  cloud3_deployment_name: str,
  cloud3_endpoint_name: str,
  cloud3_api_version: str,
  cloud3_deployment_type: enumOf(['serverless', 'managed'], 'serverless or managed'),
  cloud3_entra_scope: str,
  cloud3_entra_tenant_id: str,
  cloud3_entra_client_id: str,
  cloud3_entra_client_secret: str,
  cloud3_resource_name: str,
  cloud3_deployment_id: str,
  cloud3_model_name: str,
  Authorization: str,
};

/**
 * Target keys that stored credentials (virtual keys, integrations) may hold
 * besides provider and api_key: hosts, cloud settings, Azure deployments.
 */
export const PROVIDER_FIELDS = [
  'custom_host',
  'resource_name',
  'deployment_id',
  'api_version',
  'deployments',
  'vendor_organization',
  'vendor_project',
  'cloud1_access_key_id',
  'cloud1_secret_access_key',
  'cloud1_region',
  'cloud1_session_token',
  'cloud2_project_id',
  'cloud2_region',
  'cloud2_service_account_json',
  'cloud3_region',
  'cloud3_deployment_name',
  'cloud3_endpoint_name',
  'cloud3_api_version',
  'cloud3_deployment_type',
  'cloud3_entra_scope',
  'cloud3_entra_tenant_id',
  'cloud3_entra_client_id',
  'cloud3_entra_client_secret',
  'cloud3_resource_name',
  'cloud3_deployment_id',
  'cloud3_model_name',
] as const satisfies readonly (keyof ConfigNode)[];

export type ProviderFieldName = (typeof PROVIDER_FIELDS)[number];
export type ProviderFields = Pick<ConfigNode, ProviderFieldName>;

const providerFieldSchemas = Object.fromEntries(PROVIDER_FIELDS.map((k) => [k, nodeProperties[k]!]));

/** The semantic cache's embeddings endpoint: a target's provider, credential and host keys, and the model. */
const embedding = object(
  {
    model: nonEmptyStr,
    provider: nodeProperties.provider!,
    api_key: nodeProperties.api_key!,
    virtual_key: nodeProperties.virtual_key!,
    request_timeout: nodeProperties.request_timeout!,
    ...providerFieldSchemas,
  },
  [],
);

const cache = object(
  {
    mode: enumOf(['simple', 'semantic'], 'simple or semantic'),
    // Seconds to live; zero would store entries that can never be served.
    max_age: int(1),
    similarity_threshold: { type: 'number', minimum: 0, maximum: 1, ...must('a number between 0 and 1') },
    embedding,
  },
  ['mode'],
);

const node = object(nodeProperties, [], 'a JSON object');

// Any JSON value: what override_params, check parameters and the like may hold.
const json: SchemaObject = {
  type: ['string', 'number', 'boolean', 'null', 'array', 'object'],
  items: { $ref: '#/$defs/json' },
  additionalProperties: { $ref: '#/$defs/json' },
  ...must('a JSON value'),
};

// The config is taken as written: the only conversion (retry codes) is explicit.
ajv.addFormat('http-url', { type: 'string', validate: isHttpUrl });

const validateNode = ajv.compile<ConfigNode>({ $ref: '#/$defs/node', $defs: { node, json, cache } });

const validateProviderFields = ajv.compile<ProviderFields>({
  $ref: '#/$defs/fields',
  $defs: { fields: object(providerFieldSchemas, []), json },
});

/**
 * Provider fields outside a config (stored credentials), checked by the
 * config's own schema and messages; `at` is where they sit in the caller's
 * body, for the reported path (`configurations.custom_host`).
 */
export function checkProviderFields(fields: unknown, at: Path = []): GatewayError | null {
  return validateProviderFields(fields) ? null : schemaError(fields, validateProviderFields.errors, at);
}

/** The spec's key groups; a root config needs all keys of at least one. */
const KEY_GROUPS: readonly (readonly (keyof ConfigNode)[])[] = [
  ['provider', 'api_key'],
  ['provider', 'custom_host'],
  ['virtual_key'],
  ['strategy', 'targets'],
  ['cache'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ['provider', 'cloud1_access_key_id', 'cloud1_secret_access_key'],
  ['provider', 'cloud2_region', 'cloud2_service_account_json'],
  ['provider', 'cloud2_region', 'cloud2_project_id'],
  ['provider', 'cloud3_deployment_name', 'cloud3_deployment_type', 'cloud3_region', 'cloud3_api_version'],
  ['provider', 'cloud3_endpoint_name', 'cloud3_deployment_type'],
  // Entra ID client credentials stand in for api_key (Portkey: azure_auth_mode 'entra').
  ['provider', 'cloud3_entra_tenant_id', 'cloud3_entra_client_id', 'cloud3_entra_client_secret'],
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
  ['passthrough'],
];

const PASSTHROUGH_EXCLUDES = ['targets', 'strategy', 'override_params', 'input_guardrails', 'output_guardrails'] as const;

/** Validates a whole config; the result is deeply frozen and the input left untouched. */
export function parseConfig(raw: unknown): Result<Config> {
  let copy: unknown;
  try {
    // ajv validates in place and the result is frozen: both must happen to a copy.
    copy = structuredClone(raw);
  } catch {
    // Functions, symbols and the like: nothing JSON text can hold.
    return err(invalid('config: must be JSON data'));
  }
  return parseOwned(copy);
}

/** Validates `data`, which no one else holds: it is converted and frozen in place. */
function parseOwned(data: unknown): Result<Config> {
  if (!validateNode(data)) return err(toGatewayError(schemaProblem(data, validateNode.errors)));
  const problem = checkNode(data, []) ?? checkRoot(data);
  if (problem !== null) return err(toGatewayError(problem));
  convertRetryCodes(data);
  return ok(deepFreeze(data) as Config);
}

const memo = new Map<string, Result<Config>>();

/**
 * Parses an inline x-gateway-config header. Results, failures included, are
 * memoised by header text in a small LRU: the same string yields the same
 * frozen Config without re-validation.
 */
export function parseConfigHeader(header: string): Result<Config> {
  const hit = memo.get(header);
  if (hit !== undefined) {
    memo.delete(header);
    memo.set(header, hit);
    return hit;
  }
  const result = Object.freeze(parseHeader(header));
  if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value as string);
  memo.set(header, result);
  return result;
}

function parseHeader(header: string): Result<Config> {
  let raw: unknown;
  try {
    raw = JSON.parse(header);
  } catch (e) {
    return err(invalid(`the ${HEADER} header is not valid JSON: ${(e as Error).message}`, HEADER));
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return err(invalid(`the ${HEADER} header must be a JSON object`, HEADER));
  }
  // Freshly parsed and nobody else's: no copy needed.
  return parseOwned(raw);
}

/**
 * Rules across fields, in the order the tree is read: a node's strategy, then
 * its targets (depth first), then the node itself. The first problem wins.
 */
function checkNode(n: ConfigNode, at: Path): Problem | null {
  // Checked with the parser the router uses, so a path that validates is a path that works.
  const badDrop = (n.drop_params ?? []).findIndex((p) => parsePath(p) === null);
  if (badDrop !== -1) return { path: [...at, 'drop_params', badDrop], message: 'must be a non-empty dot path such as messages.0.name or a.b[2].c' };
  if (n.strategy !== undefined) {
    const problem = checkStrategy(n.strategy, [...at, 'strategy']);
    if (problem !== null) return problem;
  }
  if (n.cache !== undefined) {
    const problem = checkCache(n.cache, [...at, 'cache']);
    if (problem !== null) return problem;
  }
  const targets = n.targets ?? [];
  for (const [i, t] of targets.entries()) {
    const problem = checkNode(t, [...at, 'targets', i]);
    if (problem !== null) return problem;
  }
  if (n.targets !== undefined && n.strategy === undefined) return { path: [...at, 'strategy'], message: 'is required when targets is given' };
  if (n.strategy !== undefined && n.targets === undefined) return { path: [...at, 'targets'], message: 'is required when strategy is given' };
  const nowhere = targets.findIndex((t) => t.strategy === undefined && t.provider === undefined && t.virtual_key === undefined && t.passthrough !== true);
  if (nowhere !== -1) {
    return { path: [...at, 'targets', nowhere], message: 'a target without strategy must set provider, virtual_key or passthrough: true' };
  }
  if (n.strategy?.mode !== 'conditional') return null;
  const names = new Set(targets.flatMap((t) => (t.name === undefined ? [] : [t.name])));
  const message = `names no target of this node (${names.size === 0 ? 'no target has a name' : `target names: ${[...names].join(', ')}`})`;
  const namesNone = (name: string | undefined): boolean => name !== undefined && !names.has(name);
  const i = (n.strategy.conditions ?? []).findIndex((c) => namesNone(c.then));
  if (i !== -1) return { path: [...at, 'strategy', 'conditions', i, 'then'], message };
  if (namesNone(n.strategy.default)) return { path: [...at, 'strategy', 'default'], message };
  return null;
}

function checkStrategy(s: Strategy, at: Path): Problem | null {
  // The query language is checked here so a bad operator or regex is a 400, never a request-time surprise.
  for (const [i, c] of (s.conditions ?? []).entries()) {
    const problem = validateQuery(c.query);
    if (problem !== null) return { path: [...at, 'conditions', i, 'query'], message: problem };
  }
  for (const key of ['conditions', 'default'] as const) {
    if (s.mode === 'conditional' && s[key] === undefined) return { path: [...at, key], message: 'is required when mode is conditional' };
    if (s.mode !== 'conditional' && s[key] !== undefined) return { path: [...at, key], message: 'is only allowed when mode is conditional' };
  }
  return null;
}

function checkCache(c: CacheConfig, at: Path): Problem | null {
  for (const key of ['similarity_threshold', 'embedding'] as const) {
    if (c.mode !== 'semantic' && c[key] !== undefined) return { path: [...at, key], message: 'is only allowed when mode is semantic' };
  }
  const e = c.embedding;
  // Credentials or a host without a provider would be sent to the config's own target, which is not what they were written for.
  const stray = e === undefined || e.provider !== undefined || e.virtual_key !== undefined ? undefined : Object.keys(e).find((k) => k !== 'model' && k !== 'request_timeout');
  if (stray !== undefined) return { path: [...at, 'embedding', stray], message: 'needs provider or virtual_key in the embedding target' };
  return null;
}

function checkRoot(n: ConfigNode): Problem | null {
  if (n.passthrough === true) {
    const key = PASSTHROUGH_EXCLUDES.find((k) => n[k] !== undefined);
    if (key !== undefined) return { path: [key], message: 'is not allowed when passthrough is true' };
  }
  // A provider slug names stored credentials, as virtual_key does (spec: provider "@<provider_slug>").
  const providerSlug = n.provider?.startsWith('@') === true;
  if (!providerSlug && !KEY_GROUPS.some((group) => group.every((key) => n[key] !== undefined))) {
    return {
      path: [],
      message: `must name a provider slug (provider: "@slug") or contain at least one of these key groups: ${KEY_GROUPS.map((g) => g.join('+')).join(', ')}`,
    };
  }
  return null;
}

/** Retry codes may still be numeric strings ("429"); the Config holds numbers. */
function convertRetryCodes(n: ConfigNode): void {
  if (n.retry?.on_status_codes !== undefined) n.retry.on_status_codes = n.retry.on_status_codes.map(Number);
  n.targets?.forEach(convertRetryCodes);
}

function toGatewayError({ path, message }: Problem): GatewayError {
  const param = formatPath(path);
  return invalid(`config${param === '' ? '' : `.${param}`}: ${message}`, param === '' ? null : param);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
