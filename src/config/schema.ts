/**
 * Validation of the Config object (spec "Config object"). `parseConfig` is the
 * only producer of `Config` values; `parseConfigHeader` adds JSON parsing and a
 * memo so the x-gateway-config header, which repeats on every request, is
 * validated once.
 *
 * Shapes and types are a JSON Schema (shape.ts) checked by the process's one
 * Ajv (shared/json-schema.ts); rules that relate several fields run
 * afterwards in plain code.
 */
import { compileHooks, HOOK_KEYS } from '../guardrails/hooks.js';
import { PROVIDER_SETTINGS } from '../providers/settings.js';
import { parsePath } from '../shared/dot-path.js';
import { forwardProblem } from '../shared/headers.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/json-depth.js';
import { MAX_PATTERN_WEIGHT } from '../shared/linear-regex.js';
import { lazy } from '../shared/memo.js';
import { err, invalid, ok, type GatewayError, type Result } from '../shared/errors.js';
import { ajv, formatPath, object, optional, schemaError, schemaProblem, type SchemaPath as Path, type SchemaProblem as Problem } from '../shared/json-schema.js';
import { upstreamUrlProblem } from '../shared/upstream-url.js';
import { validateQuery, type RegexBudget } from './query.js';
import { sealedPath, SEALED_INPUT } from './secrets.js';
import { NODE, PROVIDER_FIELDS_SHAPE } from './shape.js';
import type { CacheConfig, Config, ConfigNode, ProviderFields, Strategy } from './types.js';

const HEADER = 'x-gateway-config';
const MEMO_SIZE = 256;
/** Targets one config may hold, nested ones counted: with retries, each can be several upstream calls. */
export const MAX_TARGETS = 100;

// The config is taken as written: the only conversion (retry codes) is explicit.
// custom_host is joined with the endpoint path as given: the rule of x-gateway-custom-host.
ajv.addFormat('http-url', { type: 'string', validate: (value: string) => upstreamUrlProblem(value) === null });

// Compiled when the first config arrives, then kept: a gateway serving requests without configs never needs it.
const validateNode = lazy(() => ajv.compile<ConfigNode>(NODE));

/**
 * Target keys that stored credentials (virtual keys, integrations) may hold
 * besides provider and api_key: hosts, and every provider's own keys.
 */
export const PROVIDER_FIELDS = Object.keys(PROVIDER_FIELDS_SHAPE) as (keyof typeof PROVIDER_FIELDS_SHAPE)[];

export type ProviderFieldName = (typeof PROVIDER_FIELDS)[number];
export type { ProviderFields };

const validateProviderFields = lazy(() => ajv.compile<ProviderFields>(object(optional(PROVIDER_FIELDS_SHAPE))));

/**
 * Provider fields outside a config (stored credentials), checked by the
 * config's own schema and messages; `at` is where they sit in the caller's
 * body, for the reported path (`configurations.custom_host`).
 */
export function checkProviderFields(fields: unknown, at: Path = []): GatewayError | null {
  const validate = validateProviderFields();
  return validate(fields) ? null : schemaError(fields, validate.errors, at);
}

/**
 * The spec's key groups; a root config needs all keys of at least one. A
 * provider's own groups (its credentials or deployment, with `provider`) come
 * from its settings.
 */
const KEY_GROUPS: readonly (readonly string[])[] = [
  ['provider', 'api_key'],
  ['provider', 'custom_host'],
  ['virtual_key'],
  ['strategy', 'targets'],
  ['cache'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ...PROVIDER_SETTINGS.flatMap((s) => s.keyGroups.map((group) => ['provider', ...group])),
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
  ['passthrough'],
];

// Hooks need the parsed body, which pass-through mode never has.
const PASSTHROUGH_EXCLUDES = ['targets', 'strategy', 'override_params', 'input_guardrails', 'output_guardrails', 'before_request_hooks', 'after_request_hooks'] as const;

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
  const sealed = sealedPath(data);
  if (sealed !== null) return err(toGatewayError({ path: sealed, message: SEALED_INPUT }, 'sealed_not_allowed'));
  const validate = validateNode();
  if (!validate(data)) return err(toGatewayError(schemaProblem(data, validate.errors)));
  const allowance = { regex: { left: MAX_PATTERN_WEIGHT }, targets: MAX_TARGETS };
  const problem = checkNode(data, [], allowance) ?? checkRoot(data) ?? checkHooks(data, allowance.regex);
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
  if (nestsDeeperThan(header)) return err(invalid(`the ${HEADER} header nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`, HEADER));
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

/** What is left of the whole config's allowances as its tree is read. */
interface Allowance {
  regex: RegexBudget;
  targets: number;
}

/**
 * Rules across fields, in the order the tree is read: a node's strategy, then
 * its targets (depth first), then the node itself. The first problem wins.
 */
function checkNode(n: ConfigNode, at: Path, allowance: Allowance): Problem | null {
  // Checked with the parser the router uses, so a path that validates is a path that works.
  const badDrop = (n.drop_params ?? []).findIndex((p) => parsePath(p) === null);
  if (badDrop !== -1) return { path: [...at, 'drop_params', badDrop], message: 'must be a non-empty dot path such as messages.0.name or a.b[2].c' };
  for (const [i, name] of (n.forward_headers ?? []).entries()) {
    const problem = forwardProblem(name.toLowerCase());
    if (problem !== null) return { path: [...at, 'forward_headers', i], message: problem };
  }
  if (n.strategy !== undefined) {
    const problem = checkStrategy(n.strategy, [...at, 'strategy'], allowance.regex);
    if (problem !== null) return problem;
  }
  if (n.cache !== undefined) {
    const problem = checkCache(n.cache, [...at, 'cache']);
    if (problem !== null) return problem;
  }
  // Hooks run once per request, before a target is chosen and after it answered.
  const hookKey = at.length === 0 ? undefined : HOOK_KEYS.find((k) => n[k] !== undefined);
  if (hookKey !== undefined) return { path: [...at, hookKey], message: "is only run at the config's top level" };
  const targets = n.targets ?? [];
  for (const [i, t] of targets.entries()) {
    if (--allowance.targets < 0) return { path: [...at, 'targets', i], message: `is one target too many: a config holds at most ${MAX_TARGETS}, nested ones counted` };
    const problem = checkNode(t, [...at, 'targets', i], allowance);
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

/** Every check's parameters, as the guardrails engine will run them (its patterns weigh on the config's budget). */
function checkHooks(n: ConfigNode, regexBudget: RegexBudget): Problem | null {
  const hooks = compileHooks(n, regexBudget);
  return hooks.ok ? null : hooks.problem;
}

function checkStrategy(s: Strategy, at: Path, regexBudget: RegexBudget): Problem | null {
  // The query language is checked here so a bad operator or regex is a 400, never a request-time surprise.
  for (const [i, c] of (s.conditions ?? []).entries()) {
    const problem = validateQuery(c.query, regexBudget);
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
  if (!providerSlug && !KEY_GROUPS.some((group) => group.every((key) => (n as Record<string, unknown>)[key] !== undefined))) {
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

function toGatewayError({ path, message }: Problem, code?: string): GatewayError {
  const param = formatPath(path);
  return invalid(`config${param === '' ? '' : `.${param}`}: ${message}`, param === '' ? null : param, code);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
