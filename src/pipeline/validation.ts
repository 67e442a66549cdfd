/**
 * Request-body validation for the model endpoints (chat, completions,
 * embeddings, responses), following the spec's field rules and OpenAI's API reference.
 *
 * Runs on every request, so the schemas are compiled once at load and the
 * validators neither coerce nor copy the body. Only the fields the gateway
 * knows are checked: unknown fields pass untouched, because providers add
 * parameters faster than the gateway can learn them.
 *
 * Fields OpenAI documents as nullable accept `null` (= unset): many clients
 * send explicit nulls for parameters they leave at their defaults.
 */
import type { SchemaObject, ValidateFunction } from 'ajv';
import type { ModelEndpoint as Endpoint } from '../shared/endpoint.js';
import { invalid, type GatewayError } from '../shared/errors.js';
import { ajv, schemaError } from '../shared/json-schema.js';
import { lazy } from '../shared/memo.js';

type Body = Record<string, unknown>;

const nullable = (type: string): string[] => [type, 'null'];
const range = (type: 'number' | 'integer', minimum?: number, maximum?: number): SchemaObject => ({
  type: nullable(type),
  ...(minimum === undefined ? {} : { minimum }),
  ...(maximum === undefined ? {} : { maximum }),
});

const penalty = range('number', -2, 2);
const logitBias: SchemaObject = {
  type: nullable('object'),
  additionalProperties: { type: 'number', minimum: -100, maximum: 100 },
};
const stop: SchemaObject = { type: ['string', 'array', 'null'], maxItems: 4, items: { type: 'string' } };

/** Fields chat and completions share, with the same rules. */
const sampling: Record<string, SchemaObject> = {
  model: { type: 'string' },
  frequency_penalty: penalty,
  presence_penalty: penalty,
  logit_bias: logitBias,
  n: range('integer', 1, 128),
  seed: range('integer'),
  stop,
  stream: { type: nullable('boolean') },
  stream_options: { type: nullable('object') },
  temperature: range('number', 0, 2),
  top_p: range('number', 0, 1),
  user: { type: 'string' },
};

const toolChoice: SchemaObject = {
  anyOf: [
    { enum: ['none', 'auto', 'required'] },
    { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
  ],
  description: '"none", "auto", "required" or an object with a type',
};

const whenRole = (roles: string[], then: SchemaObject): SchemaObject => ({
  if: { required: ['role'], properties: { role: { enum: roles } } },
  then,
});

// Part types are left open: providers accept more than OpenAI's (documents, cache_control, …).
const contentPart: SchemaObject = { type: 'object', required: ['type'], properties: { type: { type: 'string' } } };

const message: SchemaObject = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { enum: ['system', 'developer', 'user', 'assistant', 'tool', 'function'] },
    name: { type: 'string' },
    tool_call_id: { type: 'string' },
    tool_calls: { type: 'array', items: { type: 'object' } },
  },
  allOf: [
    whenRole(['system', 'developer', 'user', 'tool'], {
      required: ['content'],
      properties: { content: { type: ['string', 'array'], items: contentPart } },
    }),
    // Assistant content may be absent or null when the turn carries tool_calls (or audio, refusal, …).
    whenRole(['assistant'], { properties: { content: { type: ['string', 'array', 'null'], items: contentPart } } }),
    whenRole(['tool'], { required: ['tool_call_id'] }),
    whenRole(['function'], { required: ['name'], properties: { content: { type: ['string', 'null'] } } }),
  ],
};

const chatSchema: SchemaObject = {
  type: 'object',
  // `model` is optional: a config's override_params, or the target, may supply it.
  required: ['messages'],
  properties: {
    ...sampling,
    messages: { type: 'array', minItems: 1, items: message },
    logprobs: { type: nullable('boolean') },
    top_logprobs: range('integer', 0, 20),
    max_tokens: range('integer', 1),
    max_completion_tokens: range('integer', 1),
    response_format: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['text', 'json_object', 'json_schema'] },
        json_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      },
      if: { required: ['type'], properties: { type: { const: 'json_schema' } } },
      then: { required: ['json_schema'] },
    },
    tools: {
      type: 'array',
      maxItems: 128,
      items: {
        // Only function tools are checked in depth; OpenAI's `custom` tools and
        // providers' built-in tools (e.g. google_search) must pass through.
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string' },
          function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        },
        if: { required: ['type'], properties: { type: { const: 'function' } } },
        then: { required: ['function'] },
      },
    },
    tool_choice: toolChoice,
    parallel_tool_calls: { type: 'boolean' },
    function_call: {
      anyOf: [
        { enum: ['none', 'auto'] },
        { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      ],
      description: '"none", "auto" or an object with a name',
    },
    functions: {
      type: 'array',
      minItems: 1,
      maxItems: 128,
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    },
  },
};

const completionsSchema: SchemaObject = {
  type: 'object',
  required: ['prompt'],
  properties: {
    ...sampling,
    prompt: {
      anyOf: [
        { type: 'string' },
        { type: 'array', minItems: 1, items: { type: 'string' } },
        { type: 'array', minItems: 1, items: { type: 'integer' } },
        { type: 'array', minItems: 1, items: { type: 'array', minItems: 1, items: { type: 'integer' } } },
      ],
      description: 'a string, or a non-empty array of strings, of token ids or of token-id arrays',
    },
    best_of: range('integer', 0, 20),
    echo: { type: nullable('boolean') },
    logprobs: range('integer', 0, 5),
    max_tokens: range('integer', 0),
    suffix: { type: nullable('string') },
  },
};

const embeddingsSchema: SchemaObject = {
  type: 'object',
  required: ['input'],
  properties: {
    model: { type: 'string' },
    input: {
      type: ['string', 'array'],
      minLength: 1,
      minItems: 1,
      maxItems: 2048,
      anyOf: [
        { type: 'string' },
        { items: { type: 'string', minLength: 1 } },
        { items: { type: 'integer' } },
        { items: { type: 'array', minItems: 1, items: { type: 'integer' } } },
      ],
      description: 'a non-empty string, or an array of non-empty strings, of token ids or of non-empty token-id arrays',
    },
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: { type: 'integer', minimum: 1 },
    user: { type: 'string' },
  },
};

/**
 * POST /responses (OpenAI's "Create a model response"): the fields the
 * gateway reads itself (chaining, storage, truncation) and the spec's
 * bounds; items and tools are read deeper where they are translated
 * (providers/responses/request.ts) or by the provider.
 */
const responsesSchema: SchemaObject = {
  type: 'object',
  required: ['input'],
  properties: {
    model: { type: 'string' },
    input: {
      type: ['string', 'array'],
      items: { type: 'object' },
      description: 'a string, or an array of input items',
    },
    instructions: { type: nullable('string') },
    previous_response_id: { type: nullable('string'), minLength: 1 },
    store: { type: nullable('boolean') },
    stream: { type: nullable('boolean') },
    truncation: { enum: ['auto', 'disabled', null] },
    metadata: {
      type: nullable('object'),
      maxProperties: 16,
      propertyNames: { maxLength: 64 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    temperature: range('number', 0, 2),
    top_p: range('number', 0, 1),
    max_output_tokens: range('integer', 1),
    top_logprobs: range('integer', 0, 20),
    parallel_tool_calls: { type: nullable('boolean') },
    user: { type: 'string' },
    tools: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
    tool_choice: toolChoice,
    text: {
      type: 'object',
      properties: {
        format: {
          type: 'object',
          required: ['type'],
          properties: { type: { enum: ['text', 'json_object', 'json_schema'] }, name: { type: 'string' }, schema: { type: 'object' } },
          if: { required: ['type'], properties: { type: { const: 'json_schema' } } },
          then: { required: ['name', 'schema'] },
        },
      },
    },
    reasoning: { type: nullable('object'), properties: { effort: { type: nullable('string') } } },
    include: { type: nullable('array'), items: { type: 'string' } },
  },
};

/** Each endpoint's body schema: what validates it here and what GET /v1/openapi.json shows. */
export const MODEL_BODY_SCHEMAS: Readonly<Record<Endpoint, SchemaObject>> = {
  chat: chatSchema,
  completions: completionsSchema,
  embeddings: embeddingsSchema,
  responses: responsesSchema,
};

// Each compiled on its endpoint's first request, then kept: a gateway serving only chat never compiles the others.
const validators: Record<Endpoint, () => ValidateFunction> = {
  chat: lazy(() => ajv.compile(MODEL_BODY_SCHEMAS.chat)),
  completions: lazy(() => ajv.compile(MODEL_BODY_SCHEMAS.completions)),
  embeddings: lazy(() => ajv.compile(MODEL_BODY_SCHEMAS.embeddings)),
  responses: lazy(() => ajv.compile(MODEL_BODY_SCHEMAS.responses)),
};

const customChecks: Record<Endpoint, (body: Body) => GatewayError | null> = {
  chat: (body) => {
    if (isSet(body.top_logprobs) && body.logprobs !== true) {
      return invalid('top_logprobs: requires logprobs to be true', 'top_logprobs');
    }
    return checkStreamOptions(body);
  },
  completions: (body) => {
    const bestOf = body.best_of;
    const n = typeof body.n === 'number' ? body.n : 1;
    // best_of 1 with n 1 is the default (no best-of selection): treated like absent.
    if (typeof bestOf === 'number' && !(bestOf === 1 && n === 1)) {
      if (bestOf <= n) return invalid(`best_of: must be greater than n (${n})`, 'best_of');
      if (body.stream === true) return invalid('best_of: cannot be used with stream', 'best_of');
    }
    return checkStreamOptions(body);
  },
  embeddings: () => null,
  responses: () => null,
};

/** Validates a parsed JSON body; returns the 400 to answer, or null when valid. */
export function validateBody(endpoint: Endpoint, body: unknown): GatewayError | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return invalid('request body must be a JSON object');
  }
  const validate = validators[endpoint]();
  if (!validate(body)) return schemaError(body, validate.errors ?? []);
  return customChecks[endpoint](body as Body);
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function checkStreamOptions(body: Body): GatewayError | null {
  if (isSet(body.stream_options) && body.stream !== true) {
    return invalid('stream_options: only allowed when stream is true', 'stream_options');
  }
  return null;
}
