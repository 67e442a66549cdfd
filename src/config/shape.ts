/**
 * The Config object of the spec as a JSON Schema, built with TypeBox so that
 * its TypeScript types follow from it (config/types.ts). Every schema that
 * can fail states its rule in its `message` (the text after
 * "config.<path>: "); schema.ts compiles these and adds the rules that relate
 * several fields. A target's provider keys (cloud1_*, cloud3_*, vendor_* …)
 * are the providers' own, declared in providers/<name>/settings.ts.
 */
import { Type } from '@sinclair/typebox';
import { TEXT_SCOPES } from '../guardrails/text.js';
import { PROVIDER_KEYS } from '../providers/settings.js';
import {
  arrayOf,
  bool,
  enumOf,
  headerValue,
  int,
  jsonObject,
  must,
  nonEmptyStr,
  notAllowed,
  num,
  number,
  object,
  optional,
  refine,
  str,
  type OptionalValues,
} from '../shared/json-schema.js';

const statusCodes = arrayOf(int(100, 599), 'an array of HTTP status codes');
// The spec's parameter table types retry codes as strings, so "429" counts as 429:
// a string passes when its number (Number() ignores leading zeros) is 100–599.
// parseConfig converts them after validation, so the Config holds numbers.
const retryStatusCode = Type.Unsafe<number>({ ...int(100, 599), type: ['integer', 'string'], pattern: /^0*[1-5]\d\d$/.source });
const retryStatusCodes = arrayOf(retryStatusCode, 'an array of HTTP status codes');

/** Checked by upstreamUrlProblem (schema.ts): custom_host is joined with the endpoint path as given. */
const customHost = Type.String({ format: 'http-url', ...must('an absolute http(s) URL of printable ASCII characters, without spaces') });

export const STRATEGY = object({
  mode: enumOf(['single', 'loadbalance', 'fallback', 'conditional'], 'one of single, loadbalance, fallback, conditional'),
  ...optional({
    conditions: Type.Array(object({ query: jsonObject, then: str }, 'an object {query, then}'), { minItems: 1, ...must('a non-empty array') }),
    default: str,
    on_status_codes: statusCodes,
  }),
});

export const RETRY = object({ attempts: int(0, 5), ...optional({ on_status_codes: retryStatusCodes, use_retry_after_headers: bool }) });

export const CB_CONFIG = object({ failure_threshold: num(1), cooldown_interval: num(30000), ...optional({ failure_status_codes: statusCodes }) });

const feedback = object(optional({ value: number, weight: number, metadata: jsonObject }));

const outcome = (denyReason: string | null) => object(optional({ feedback, deny: denyReason === null ? bool : notAllowed(denyReason) }));

/** What text of a chat request a before hook's checks read (guardrails/text.ts). */
const textScope = enumOf(TEXT_SCOPES, `one of ${TEXT_SCOPES.join(', ')}`);

const hookCheck = object({ id: str, parameters: jsonObject }, 'an object {id, parameters}');

function hooks(kind: 'before' | 'after') {
  const on = outcome(kind === 'before' ? null : 'is only allowed in before_request_hooks');
  const hook = object({
    id: str,
    ...optional({
      type: str,
      async: kind === 'after' ? bool : notAllowed('is only allowed in after_request_hooks'),
      scope: kind === 'before' ? textScope : notAllowed('is only allowed in before_request_hooks'),
      // Where configs written for Portkey put them.
      deny: bool,
      sequential: bool,
      checks: arrayOf(hookCheck, 'an array'),
      on_fail: on,
      on_success: on,
    }),
  });
  return arrayOf(hook, 'an array');
}

function guardrails(kind: 'input' | 'output') {
  const on = outcome(kind === 'output' ? null : 'is only allowed in output_guardrails');
  const scope = kind === 'input' ? textScope : notAllowed('is only allowed in input_guardrails');
  const properties = { id: str, deny: bool, async: bool, sequential: bool, scope, on_fail: on, on_success: on };
  // An id, or an object whose keys besides these name checks (e.g. default.regexMatch)
  // and carry their parameters. Object keywords do not apply to strings.
  const guardrail = Type.Unsafe<string | (OptionalValues<typeof properties> & Record<string, unknown>)>({
    type: ['string', 'object'],
    properties,
    additionalProperties: { ...jsonObject, message: 'must be an object of check parameters' },
    ...must('a guardrail id or an object'),
  });
  return arrayOf(guardrail, 'an array');
}

/** How a target names its provider and credentials: in the config's nodes and in the semantic cache's embedding target. */
const reach = {
  provider: nonEmptyStr,
  api_key: headerValue,
  virtual_key: nonEmptyStr,
  request_timeout: int(1),
};

/** Target keys that stored credentials (virtual keys, integrations) may hold besides provider and api_key: the host and every provider's keys. */
export const PROVIDER_FIELDS_SHAPE = { custom_host: customHost, ...PROVIDER_KEYS };

/** The semantic cache's embeddings endpoint: a target's provider, credential and host keys, and the model. */
export const EMBEDDING = object(optional({ model: nonEmptyStr, ...reach, ...PROVIDER_FIELDS_SHAPE }));

export const CACHE = object({
  mode: enumOf(['simple', 'semantic'], 'simple or semantic'),
  ...optional({
    // Seconds to live; zero would store entries that can never be served.
    max_age: int(1),
    similarity_threshold: Type.Number({ minimum: 0, maximum: 1, ...must('a number between 0 and 1') }),
    embedding: EMBEDDING,
  }),
});

/** One node of the config tree: the root or any target at any depth. */
export const NODE = Type.Recursive(
  (node) =>
    object(
      optional({
        strategy: STRATEGY,
        targets: refine(arrayOf(node, 'a non-empty array of config objects'), { minItems: 1 }, 'must be a non-empty array'),
        name: str,
        ...reach,
        custom_host: customHost,
        strict_compat_compliance: bool,
        override_params: jsonObject,
        default_params: jsonObject,
        drop_params: arrayOf(str, 'an array of dot paths'),
        prompt_id: str,
        cache: CACHE,
        retry: RETRY,
        cb_config: CB_CONFIG,
        weight: num(0),
        on_status_codes: statusCodes,
        passthrough: bool,
        // Each name is checked by forwardProblem (schema.ts), the rule of x-gateway-forward-headers.
        forward_headers: arrayOf(str, 'an array of header names'),
        before_request_hooks: hooks('before'),
        after_request_hooks: hooks('after'),
        input_guardrails: guardrails('input'),
        output_guardrails: guardrails('output'),
        // Characters of a streamed answer held back while output hooks judge it (guardrails/stream.ts).
        guardrails_stream_window: int(0, 100_000),
        Authorization: headerValue,
        ...PROVIDER_KEYS,
      }),
      'a JSON object',
    ),
  { $id: 'node' },
);
