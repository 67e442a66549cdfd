import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateBody } from '../src/pipeline/validation.js';
import type { ModelEndpoint as Endpoint } from '../src/shared/endpoint.js';

type Body = Record<string, unknown>;

function accepts(endpoint: Endpoint, body: Body): void {
  const error = validateBody(endpoint, body);
  assert.equal(error, null, `expected ${JSON.stringify(body).slice(0, 200)} to pass, got: ${error?.message}`);
}

function rejects(endpoint: Endpoint, body: unknown, param: string | null, message?: string): void {
  const error = validateBody(endpoint, body);
  assert.ok(error, `expected ${JSON.stringify(body)?.slice(0, 200)} to be rejected`);
  assert.equal(error.status, 400);
  assert.equal(error.type, 'invalid_request_error');
  assert.equal(error.param, param, error.message);
  if (message !== undefined) assert.equal(error.message, message);
  else if (param !== null) assert.ok(error.message.startsWith(`${param}: `), error.message);
}

const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
];
const chat = (fields: Body): Body => ({ model: 'gpt-4o-mini', messages, ...fields });
const completion = (fields: Body): Body => ({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi', ...fields });
const embedding = (fields: Body): Body => ({ model: 'text-embedding-3-small', input: 'hello', ...fields });
const fn = (name: string): Body => ({ type: 'function', function: { name, parameters: { type: 'object' } } });
const many = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i));

describe('validateBody: any endpoint', () => {
  for (const body of [null, [], 'text', 42, true]) {
    it(`rejects a non-object body ${JSON.stringify(body)}`, () => {
      for (const endpoint of ['chat', 'completions', 'embeddings'] as const) {
        rejects(endpoint, body, null, 'request body must be a JSON object');
      }
    });
  }

  it('allows unknown fields everywhere and leaves the body untouched', () => {
    const body = chat({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      store: true,
      messages: [{ role: 'user', content: 'Hi', cache_control: { type: 'ephemeral' } }],
      tools: [{ ...fn('f'), cache_control: { type: 'ephemeral' } }],
    });
    const copy = structuredClone(body);
    accepts('chat', body);
    assert.deepEqual(body, copy);
    accepts('completions', completion({ brand_new_param: [1, 2] }));
    accepts('embeddings', embedding({ input_type: 'query', truncate: 'END' }));
  });

  it('does not coerce types', () => {
    rejects('chat', chat({ temperature: '1' }), 'temperature', 'temperature: must be a number or null');
    rejects('completions', completion({ max_tokens: '16' }), 'max_tokens');
    rejects('embeddings', embedding({ dimensions: '8' }), 'dimensions', 'dimensions: must be an integer');
  });
});

describe('validateBody: chat', () => {
  it('accepts a typical body and leaves model optional', () => {
    accepts('chat', chat({}));
    accepts('chat', { messages }); // a config's override_params may supply the model
  });

  it('model must be a string', () => {
    rejects('chat', chat({ model: 4 }), 'model', 'model: must be a string');
  });

  it('messages: required, an array of at least 1 item', () => {
    rejects('chat', { model: 'm' }, 'messages', 'messages: is required');
    rejects('chat', chat({ messages: [] }), 'messages', 'messages: must contain at least 1 item');
    rejects('chat', chat({ messages: 'Hi' }), 'messages', 'messages: must be an array');
    rejects('chat', chat({ messages: ['Hi'] }), 'messages[0]', 'messages[0]: must be an object');
  });

  it('messages: role is required and one of the six variants', () => {
    accepts('chat', chat({
      messages: [
        { role: 'system', content: 's' },
        { role: 'developer', content: [{ type: 'text', text: 'd' }] },
        { role: 'user', content: [{ type: 'text', text: 'u' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '42' },
        { role: 'assistant', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'function', name: 'f', content: null },
      ],
    }));
    rejects('chat', chat({ messages: [{ content: 'Hi' }] }), 'messages[0].role', 'messages[0].role: is required');
    rejects('chat', chat({ messages: [messages[0], { role: 'bot', content: 'Hi' }] }), 'messages[1].role',
      'messages[1].role: must be one of system, developer, user, assistant, tool, function');
  });

  it('messages: content rules per role', () => {
    rejects('chat', chat({ messages: [{ role: 'user' }] }), 'messages[0].content', 'messages[0].content: is required');
    rejects('chat', chat({ messages: [{ role: 'user', content: null }] }), 'messages[0].content',
      'messages[0].content: must be a string or an array');
    rejects('chat', chat({ messages: [{ role: 'system', content: 5 }] }), 'messages[0].content');
    rejects('chat', chat({ messages: [{ role: 'assistant', content: 5 }] }), 'messages[0].content',
      'messages[0].content: must be a string, an array or null');
    rejects('chat', chat({ messages: [{ role: 'user', content: [{ text: 'no type' }] }] }), 'messages[0].content[0].type');
    rejects('chat', chat({ messages: [{ role: 'user', content: ['text'] }] }), 'messages[0].content[0]');
  });

  it('messages: tool messages need tool_call_id, function messages a name', () => {
    rejects('chat', chat({ messages: [{ role: 'tool', content: '42' }] }), 'messages[0].tool_call_id',
      'messages[0].tool_call_id: is required');
    rejects('chat', chat({ messages: [{ role: 'tool', content: '42', tool_call_id: 7 }] }), 'messages[0].tool_call_id');
    rejects('chat', chat({ messages: [{ role: 'function', content: '42' }] }), 'messages[0].name');
    rejects('chat', chat({ messages: [{ role: 'user', content: 'Hi', name: 3 }] }), 'messages[0].name');
  });

  for (const field of ['frequency_penalty', 'presence_penalty']) {
    it(`${field}: number from -2 to 2`, () => {
      accepts('chat', chat({ [field]: -2 }));
      accepts('chat', chat({ [field]: 2 }));
      accepts('chat', chat({ [field]: null }));
      rejects('chat', chat({ [field]: 2.5 }), field, `${field}: must be between -2 and 2`);
      rejects('chat', chat({ [field]: -2.01 }), field);
    });
  }

  it('logit_bias: object of numbers from -100 to 100', () => {
    accepts('chat', chat({ logit_bias: { '50256': -100, '1': 100 } }));
    rejects('chat', chat({ logit_bias: { '50256': 101 } }), 'logit_bias.50256', 'logit_bias.50256: must be between -100 and 100');
    rejects('chat', chat({ logit_bias: { '50256': 'x' } }), 'logit_bias.50256');
    rejects('chat', chat({ logit_bias: [1] }), 'logit_bias');
  });

  it('logprobs: boolean', () => {
    accepts('chat', chat({ logprobs: true }));
    rejects('chat', chat({ logprobs: 'yes' }), 'logprobs');
  });

  it('top_logprobs: integer 0..20, only with logprobs true', () => {
    accepts('chat', chat({ logprobs: true, top_logprobs: 0 }));
    accepts('chat', chat({ logprobs: true, top_logprobs: 20 }));
    accepts('chat', chat({ top_logprobs: null }));
    rejects('chat', chat({ logprobs: true, top_logprobs: 21 }), 'top_logprobs', 'top_logprobs: must be between 0 and 20');
    rejects('chat', chat({ logprobs: true, top_logprobs: -1 }), 'top_logprobs');
    rejects('chat', chat({ logprobs: true, top_logprobs: 1.5 }), 'top_logprobs');
    rejects('chat', chat({ top_logprobs: 5 }), 'top_logprobs', 'top_logprobs: requires logprobs to be true');
    rejects('chat', chat({ logprobs: false, top_logprobs: 5 }), 'top_logprobs');
  });

  for (const field of ['max_tokens', 'max_completion_tokens']) {
    it(`${field}: integer of at least 1`, () => {
      accepts('chat', chat({ [field]: 1 }));
      rejects('chat', chat({ [field]: 0 }), field, `${field}: must be at least 1`);
      rejects('chat', chat({ [field]: 10.5 }), field);
    });
  }

  it('n: integer 1..128', () => {
    accepts('chat', chat({ n: 1 }));
    accepts('chat', chat({ n: 128 }));
    rejects('chat', chat({ n: 129 }), 'n', 'n: must be between 1 and 128');
    rejects('chat', chat({ n: 0 }), 'n');
    rejects('chat', chat({ n: 2.5 }), 'n', 'n: must be an integer or null');
  });

  it('response_format: text, json_object or json_schema with a named schema', () => {
    accepts('chat', chat({ response_format: { type: 'text' } }));
    accepts('chat', chat({ response_format: { type: 'json_object' } }));
    accepts('chat', chat({ response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object' }, strict: true } } }));
    rejects('chat', chat({ response_format: { type: 'xml' } }), 'response_format.type',
      'response_format.type: must be one of text, json_object, json_schema');
    rejects('chat', chat({ response_format: {} }), 'response_format.type', 'response_format.type: is required');
    rejects('chat', chat({ response_format: { type: 'json_schema' } }), 'response_format.json_schema');
    rejects('chat', chat({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }),
      'response_format.json_schema.name');
    rejects('chat', chat({ response_format: 'json' }), 'response_format');
  });

  it('seed: integer', () => {
    accepts('chat', chat({ seed: -42 }));
    rejects('chat', chat({ seed: 1.5 }), 'seed');
  });

  it('stop: string or array of at most 4 strings', () => {
    accepts('chat', chat({ stop: '\n' }));
    accepts('chat', chat({ stop: ['a', 'b', 'c', 'd'] }));
    accepts('chat', chat({ stop: null }));
    rejects('chat', chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop', 'stop: must contain at most 4 items');
    rejects('chat', chat({ stop: ['a', 1] }), 'stop[1]', 'stop[1]: must be a string');
    rejects('chat', chat({ stop: 5 }), 'stop');
  });

  it('stream: boolean', () => {
    accepts('chat', chat({ stream: true }));
    rejects('chat', chat({ stream: 'true' }), 'stream');
  });

  it('stream_options: object, only with stream true', () => {
    accepts('chat', chat({ stream: true, stream_options: { include_usage: true } }));
    accepts('chat', chat({ stream_options: null }));
    rejects('chat', chat({ stream_options: { include_usage: true } }), 'stream_options',
      'stream_options: only allowed when stream is true');
    rejects('chat', chat({ stream: false, stream_options: { include_usage: true } }), 'stream_options');
    rejects('chat', chat({ stream: true, stream_options: true }), 'stream_options');
  });

  it('temperature: 0..2', () => {
    accepts('chat', chat({ temperature: 0 }));
    accepts('chat', chat({ temperature: 2 }));
    rejects('chat', chat({ temperature: 2.01 }), 'temperature', 'temperature: must be between 0 and 2');
    rejects('chat', chat({ temperature: -0.1 }), 'temperature');
  });

  it('top_p: 0..1', () => {
    accepts('chat', chat({ top_p: 1 }));
    rejects('chat', chat({ top_p: 1.01 }), 'top_p', 'top_p: must be between 0 and 1');
  });

  it('tools: at most 128, function tools need a named function', () => {
    accepts('chat', chat({ tools: many(128, (i) => fn(`f${i}`)) }));
    accepts('chat', chat({ tools: [{ type: 'custom', custom: { name: 'grammar' } }] }));
    rejects('chat', chat({ tools: many(129, (i) => fn(`f${i}`)) }), 'tools', 'tools: must contain at most 128 items');
    rejects('chat', chat({ tools: [fn('a'), { type: 'function' }] }), 'tools[1].function', 'tools[1].function: is required');
    rejects('chat', chat({ tools: [{ type: 'function', function: { description: 'x' } }] }), 'tools[0].function.name');
    rejects('chat', chat({ tools: [{ function: { name: 'f' } }] }), 'tools[0].type');
    rejects('chat', chat({ tools: fn('f') }), 'tools');
  });

  it('tool_choice: none, auto, required or an object', () => {
    for (const choice of ['none', 'auto', 'required', { type: 'function', function: { name: 'f' } }]) {
      accepts('chat', chat({ tools: [fn('f')], tool_choice: choice }));
    }
    rejects('chat', chat({ tool_choice: 'any' }), 'tool_choice',
      'tool_choice: must be "none", "auto", "required" or an object with a type');
    rejects('chat', chat({ tool_choice: 1 }), 'tool_choice');
  });

  it('parallel_tool_calls: boolean', () => {
    accepts('chat', chat({ parallel_tool_calls: false }));
    rejects('chat', chat({ parallel_tool_calls: 'no' }), 'parallel_tool_calls');
  });

  it('user: string', () => {
    accepts('chat', chat({ user: 'u-1' }));
    rejects('chat', chat({ user: 1 }), 'user', 'user: must be a string');
  });

  it('function_call: none, auto or {name}', () => {
    for (const call of ['none', 'auto', { name: 'f' }]) accepts('chat', chat({ function_call: call }));
    rejects('chat', chat({ function_call: 'required' }), 'function_call');
    rejects('chat', chat({ function_call: {} }), 'function_call');
  });

  it('functions: 1 to 128 named functions', () => {
    accepts('chat', chat({ functions: [{ name: 'f' }] }));
    accepts('chat', chat({ functions: many(128, (i) => ({ name: `f${i}` })) }));
    rejects('chat', chat({ functions: [] }), 'functions', 'functions: must contain between 1 and 128 items');
    rejects('chat', chat({ functions: many(129, (i) => ({ name: `f${i}` })) }), 'functions');
    rejects('chat', chat({ functions: [{ description: 'x' }] }), 'functions[0].name');
  });
});

describe('validateBody: completions', () => {
  it('prompt: string, strings, tokens or token arrays', () => {
    for (const prompt of ['', 'Say hi', ['a', 'b'], [1, 2, 3], [[1, 2], [3]]]) {
      accepts('completions', completion({ prompt }));
    }
    accepts('completions', { prompt: 'no model' });
    rejects('completions', { model: 'm' }, 'prompt', 'prompt: is required');
    for (const prompt of [5, [], ['a', 1], [[1], []], [[1], ['a']], null]) {
      rejects('completions', completion({ prompt }), 'prompt');
    }
  });

  it('best_of: integer 0..20, greater than n, not streamed', () => {
    accepts('completions', completion({ best_of: 2 }));
    accepts('completions', completion({ best_of: 3, n: 2 }));
    accepts('completions', completion({ best_of: 1, stream: true })); // the default: no best-of selection
    accepts('completions', completion({ best_of: null, stream: true }));
    rejects('completions', completion({ best_of: 2, n: 2 }), 'best_of', 'best_of: must be greater than n (2)');
    rejects('completions', completion({ best_of: 1, n: 2 }), 'best_of');
    rejects('completions', completion({ best_of: 21 }), 'best_of', 'best_of: must be between 0 and 20');
    rejects('completions', completion({ best_of: 3, stream: true }), 'best_of', 'best_of: cannot be used with stream');
  });

  it('echo: boolean', () => {
    accepts('completions', completion({ echo: true }));
    rejects('completions', completion({ echo: 1 }), 'echo');
  });

  for (const field of ['frequency_penalty', 'presence_penalty']) {
    it(`${field}: -2..2`, () => {
      accepts('completions', completion({ [field]: -2 }));
      rejects('completions', completion({ [field]: 3 }), field);
    });
  }

  it('logit_bias: -100..100', () => {
    accepts('completions', completion({ logit_bias: { '50256': -100 } }));
    rejects('completions', completion({ logit_bias: { '50256': -101 } }), 'logit_bias.50256');
  });

  it('logprobs: integer 0..5', () => {
    accepts('completions', completion({ logprobs: 5 }));
    rejects('completions', completion({ logprobs: 6 }), 'logprobs', 'logprobs: must be between 0 and 5');
    rejects('completions', completion({ logprobs: true }), 'logprobs');
  });

  it('max_tokens: integer of at least 0', () => {
    accepts('completions', completion({ max_tokens: 0 }));
    rejects('completions', completion({ max_tokens: -1 }), 'max_tokens', 'max_tokens: must be at least 0');
  });

  it('n: 1..128', () => {
    accepts('completions', completion({ n: 128 }));
    rejects('completions', completion({ n: 129 }), 'n');
  });

  it('seed: integer', () => {
    accepts('completions', completion({ seed: 7 }));
    rejects('completions', completion({ seed: 'x' }), 'seed');
  });

  it('stop: at most 4', () => {
    accepts('completions', completion({ stop: ['a', 'b', 'c', 'd'] }));
    rejects('completions', completion({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop');
  });

  it('stream and stream_options', () => {
    accepts('completions', completion({ stream: true, stream_options: { include_usage: true } }));
    rejects('completions', completion({ stream: 1 }), 'stream');
    rejects('completions', completion({ stream_options: { include_usage: true } }), 'stream_options');
  });

  it('suffix: string', () => {
    accepts('completions', completion({ suffix: '}' }));
    rejects('completions', completion({ suffix: 1 }), 'suffix');
  });

  it('temperature 0..2 and top_p 0..1', () => {
    accepts('completions', completion({ temperature: 2, top_p: 0 }));
    rejects('completions', completion({ temperature: 2.01 }), 'temperature');
    rejects('completions', completion({ top_p: -0.5 }), 'top_p');
  });

  it('user: string', () => {
    accepts('completions', completion({ user: 'u' }));
    rejects('completions', completion({ user: {} }), 'user');
  });
});

describe('validateBody: embeddings', () => {
  it('input: non-empty string or array of 1..2048 items', () => {
    for (const input of ['hello', ['a', 'b'], [1, 2], [[1, 2], [3]], many(2048, () => 'x')]) {
      accepts('embeddings', embedding({ input }));
    }
    accepts('embeddings', { input: 'no model' });
    rejects('embeddings', { model: 'm' }, 'input', 'input: is required');
    rejects('embeddings', embedding({ input: '' }), 'input', 'input: must not be empty');
    rejects('embeddings', embedding({ input: [] }), 'input', 'input: must contain between 1 and 2048 items');
    rejects('embeddings', embedding({ input: many(2049, () => 'x') }), 'input');
    for (const input of [[''], ['a', 1], [[]], [[1], 'a'], 5, null]) {
      rejects('embeddings', embedding({ input }), 'input');
    }
  });

  it('model: string', () => {
    rejects('embeddings', embedding({ model: ['m'] }), 'model');
  });

  it('encoding_format: float or base64', () => {
    accepts('embeddings', embedding({ encoding_format: 'float' }));
    accepts('embeddings', embedding({ encoding_format: 'base64' }));
    rejects('embeddings', embedding({ encoding_format: 'int8' }), 'encoding_format',
      'encoding_format: must be one of float, base64');
  });

  it('dimensions: integer of at least 1', () => {
    accepts('embeddings', embedding({ dimensions: 1 }));
    rejects('embeddings', embedding({ dimensions: 0 }), 'dimensions', 'dimensions: must be at least 1');
    rejects('embeddings', embedding({ dimensions: 1.5 }), 'dimensions');
  });

  it('user: string', () => {
    accepts('embeddings', embedding({ user: 'u' }));
    rejects('embeddings', embedding({ user: 5 }), 'user');
  });
});
