/**
 * Validation of the Config object (spec "Config object"). `parseConfig` is the
 * only producer of `Config` values; `parseConfigHeader` adds JSON parsing and a
 * memo so the x-gateway-config header, which repeats on every request, is
 * validated once.
 */
import { validateQuery } from '../routing/conditions.js';
import { z } from 'zod';
import { err, invalid, ok, type GatewayError, type Result } from '../shared/errors.js';
import type { Config, ConfigNode } from './types.js';

const HEADER = 'x-gateway-config';
const MEMO_SIZE = 256;

/** Error option: "is required" when the key is missing, else "must be <what>". */
const expect = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`),
});

const str = () => z.string(expect('a string'));
const nonEmptyStr = () => str().min(1, 'must be a non-empty string');
const bool = () => z.boolean(expect('a boolean'));
const jsonObject = () => z.record(z.string(), z.json(), expect('a JSON object'));

function int(min: number, max?: number) {
  const what = max === undefined ? `an integer of at least ${min}` : `an integer between ${min} and ${max}`;
  const atLeast = z.int(expect(what)).min(min, `must be ${what}`);
  return max === undefined ? atLeast : atLeast.max(max, `must be ${what}`);
}

function num(min: number) {
  const what = `a number of at least ${min}`;
  return z.number(expect(what)).min(min, `must be ${what}`);
}

/** A key that a sibling schema allows but this one must not carry. */
const notAllowed = (reason: string) => z.never({ error: reason }).optional();

const statusCode = int(100, 599);
const statusCodes = z.array(statusCode, expect('an array of HTTP status codes'));
// The spec's parameter table types retry codes as strings, so "429" counts as 429.
const retryStatusCodes = z.array(
  z.preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), statusCode),
  expect('an array of HTTP status codes'),
);

// RFC 9110 token characters.
const headerName = str().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name');
// Dot-separated keys, each optionally followed by [index]: messages.0.name, a.b[2].c.
const dropPath = str().regex(
  /^[^.[\]]+(\[\d+\])*(\.[^.[\]]+(\[\d+\])*)*$/,
  'must be a non-empty dot path such as messages.0.name',
);

// The query language is checked here so a bad operator or regex is a 400, never a request-time surprise.
const conditionQuery = jsonObject().superRefine((q, ctx) => {
  const problem = validateQuery(q);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

const strategy = z
  .strictObject(
    {
      mode: z.enum(['single', 'loadbalance', 'fallback', 'conditional'], expect('one of single, loadbalance, fallback, conditional')),
      conditions: z
        .array(z.strictObject({ query: conditionQuery, then: str() }, expect('an object {query, then}')), expect('a non-empty array'))
        .min(1, 'must be a non-empty array')
        .optional(),
      default: str().optional(),
      on_status_codes: statusCodes.optional(),
    },
    expect('an object'),
  )
  .superRefine((s, ctx) => {
    if (s.mode === 'conditional') {
      if (s.conditions === undefined) ctx.addIssue({ code: 'custom', path: ['conditions'], message: 'is required when mode is conditional' });
      if (s.default === undefined) ctx.addIssue({ code: 'custom', path: ['default'], message: 'is required when mode is conditional' });
      return;
    }
    for (const key of ['conditions', 'default'] as const) {
      if (s[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is only allowed when mode is conditional' });
    }
  });

const cache = z.strictObject(
  {
    mode: z.enum(['simple', 'semantic'], expect('simple or semantic')),
    // Seconds to live; zero would store entries that can never be served.
    max_age: int(1).optional(),
  },
  expect('an object'),
);

const retry = z.strictObject(
  { attempts: int(0, 5), on_status_codes: retryStatusCodes.optional(), use_retry_after_headers: bool().optional() },
  expect('an object'),
);

const cbConfig = z.strictObject(
  { failure_threshold: num(1), cooldown_interval: num(30000), failure_status_codes: statusCodes.optional() },
  expect('an object'),
);

const feedback = z.strictObject(
  { value: z.number(expect('a number')).optional(), weight: z.number(expect('a number')).optional(), metadata: jsonObject().optional() },
  expect('an object'),
);

const outcome = (denyReason: string | null) =>
  z.strictObject(
    { feedback: feedback.optional(), deny: denyReason === null ? bool().optional() : notAllowed(denyReason) },
    expect('an object'),
  );

const hookCheck = z.strictObject({ id: str(), parameters: jsonObject() }, expect('an object {id, parameters}'));

function hooks(kind: 'before' | 'after') {
  const on = outcome(kind === 'before' ? null : 'is only allowed in before_request_hooks');
  const hook = z.strictObject(
    {
      id: str(),
      type: str().optional(),
      async: kind === 'after' ? bool().optional() : notAllowed('is only allowed in after_request_hooks'),
      checks: z.array(hookCheck, expect('an array')).optional(),
      on_fail: on.optional(),
      on_success: on.optional(),
    },
    expect('an object'),
  );
  return z.array(hook, expect('an array'));
}

function guardrails(kind: 'input' | 'output') {
  const on = outcome(kind === 'output' ? null : 'is only allowed in output_guardrails');
  // Keys besides these name checks (e.g. default.regexMatch) and carry their parameters.
  const object = z
    .object({ id: str().optional(), deny: bool().optional(), async: bool().optional(), on_fail: on.optional(), on_success: on.optional() })
    .catchall(z.record(z.string(), z.json(), { error: 'must be an object of check parameters' }));
  return z.array(z.union([str(), object], expect('a guardrail id or an object')), expect('an array'));
}

const deployment = z.strictObject(
  { deployment_id: str(), alias: str(), api_version: str(), is_default: bool().optional() },
  expect('an object'),
);

const node: z.ZodType<ConfigNode> = z
  .strictObject(
    {
      strategy: strategy.optional(),
      get targets() {
        return z.array(node, expect('a non-empty array of config objects')).min(1, 'must be a non-empty array').optional();
      },
      name: str().optional(),
      provider: nonEmptyStr().optional(),
      api_key: str().optional(),
      virtual_key: nonEmptyStr().optional(),
      custom_host: z.url({ protocol: /^https?$/, ...expect('an http(s) URL') }).optional(),
      strict_compat_compliance: bool().optional(),
      resource_name: str().optional(),
      deployment_id: str().optional(),
      api_version: str().optional(),
      deployments: z.array(deployment, expect('an array')).optional(),
      override_params: jsonObject().optional(),
      default_params: jsonObject().optional(),
      drop_params: z.array(dropPath, expect('an array of dot paths')).optional(),
      prompt_id: str().optional(),
      request_timeout: int(1).optional(),
      cache: cache.optional(),
      retry: retry.optional(),
      cb_config: cbConfig.optional(),
      weight: num(0).optional(),
      on_status_codes: statusCodes.optional(),
      passthrough: bool().optional(),
      forward_headers: z.array(headerName, expect('an array of header names')).optional(),
      before_request_hooks: hooks('before').optional(),
      after_request_hooks: hooks('after').optional(),
      input_guardrails: guardrails('input').optional(),
      output_guardrails: guardrails('output').optional(),
      cloud1_access_key_id: str().optional(),
      cloud1_secret_access_key: str().optional(),
      cloud1_region: str().optional(),
      cloud1_session_token: str().optional(),
      vendor_organization: str().optional(),
      vendor_project: str().optional(),
      cloud2_project_id: str().optional(),
      cloud2_region: str().optional(),
      cloud2_service_account_json: jsonObject().optional(),
      cloud3_region: str().optional(),
      cloud3_deployment_name: str().optional(),
      cloud3_endpoint_name: str().optional(),
      cloud3_api_version: str().optional(),
      cloud3_deployment_type: z.enum(['serverless', 'managed'], expect('serverless or managed')).optional(),
      cloud3_entra_scope: str().optional(),
      cloud3_resource_name: str().optional(),
      cloud3_deployment_id: str().optional(),
      cloud3_model_name: str().optional(),
      Authorization: str().optional(),
    },
    expect('a JSON object'),
  )
  .superRefine((n, ctx) => {
    if (n.targets !== undefined && n.strategy === undefined) {
      ctx.addIssue({ code: 'custom', path: ['strategy'], message: 'is required when targets is given' });
    }
    if (n.strategy !== undefined && n.targets === undefined) {
      ctx.addIssue({ code: 'custom', path: ['targets'], message: 'is required when strategy is given' });
    }
    const targets = n.targets ?? [];
    targets.forEach((t, i) => {
      if (t.strategy === undefined && t.provider === undefined && t.virtual_key === undefined && t.passthrough !== true) {
        ctx.addIssue({
          code: 'custom',
          path: ['targets', i],
          message: 'a target without strategy must set provider, virtual_key or passthrough: true',
        });
      }
    });
    if (n.strategy?.mode !== 'conditional') return;
    const names = new Set(targets.flatMap((t) => (t.name === undefined ? [] : [t.name])));
    const known = names.size === 0 ? 'no target has a name' : `target names: ${[...names].join(', ')}`;
    const mustName = (path: (string | number)[], value: string | undefined) => {
      if (value !== undefined && !names.has(value)) {
        ctx.addIssue({ code: 'custom', path: ['strategy', ...path], message: `names no target of this node (${known})` });
      }
    };
    n.strategy.conditions?.forEach((c, i) => mustName(['conditions', i, 'then'], c.then));
    mustName(['default'], n.strategy.default);
  });

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
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
  ['passthrough'],
];

const PASSTHROUGH_EXCLUDES = ['targets', 'strategy', 'override_params', 'input_guardrails', 'output_guardrails'] as const;

const root = node.superRefine((n, ctx) => {
  if (n.passthrough === true) {
    for (const key of PASSTHROUGH_EXCLUDES) {
      if (n[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is not allowed when passthrough is true' });
    }
  }
  if (!KEY_GROUPS.some((group) => group.every((key) => n[key] !== undefined))) {
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: `must contain at least one of these key groups: ${KEY_GROUPS.map((g) => g.join('+')).join(', ')}`,
    });
  }
});

/** Validates a whole config; the result is deeply frozen. */
export function parseConfig(raw: unknown): Result<Config> {
  const parsed = root.safeParse(raw);
  if (!parsed.success) return err(toGatewayError(firstIssue(parsed.error.issues)));
  return ok(deepFreeze(parsed.data) as Config);
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
  return parseConfig(raw);
}

/** Only the first issue is reported; a failed union is explained by its most relevant branch. */
function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue {
  const issue = issues[0]!;
  if (issue.code !== 'invalid_union') return issue;
  // The branch that got past its type check (e.g. the object form of a guardrail) says what is wrong.
  const branch = issue.errors.find((b) => b.length > 0 && !(b[0]!.code === 'invalid_type' && b[0]!.path.length === 0));
  if (branch === undefined) return issue;
  const inner = firstIssue(branch);
  return { ...inner, path: [...issue.path, ...inner.path] };
}

function toGatewayError(issue: z.core.$ZodIssue): GatewayError {
  const unknownKey = issue.code === 'unrecognized_keys';
  const path = unknownKey ? [...issue.path, issue.keys[0]!] : issue.path;
  const param = formatPath(path);
  const message = unknownKey ? 'unknown key' : issue.message;
  return invalid(`config${param === '' ? '' : `.${param}`}: ${message}`, param === '' ? null : param);
}

/** ['targets', 1, 'retry', 'attempts'] → "targets[1].retry.attempts". */
function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc === '' ? String(key) : `${acc}.${String(key)}`),
    '',
  );
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
