// OpenAI chat request → Converse request.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toConverse } from './request.js';
import { usesLegacyFunctions, type ChatRequest } from '../../shared/openai-request.js';
import { value, refusal } from '../../../../test/support/results.js';

const converse = (body: Record<string, unknown>) => toConverse(body as ChatRequest);

describe('OpenAI chat → Converse', () => {
  const base = { model: 'anthropic.claude-3-haiku-20240307-v1:0' };
  const convert = (body: Record<string, unknown>) => value(converse({ ...base, ...body }));

  it('legacy functions: calls get ids the function results reuse; function_call picks the tool', () => {
    const body = {
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, function_call: { name: 'weather', arguments: '{"city":"Oslo"}' } },
        { role: 'function', name: 'weather', content: 'cold' },
      ],
      functions: [{ name: 'weather', parameters: { type: 'object' } }],
      function_call: { name: 'weather' },
    };
    const request = convert(body);
    assert.equal(usesLegacyFunctions(body as unknown as ChatRequest), true);
    assert.deepEqual(request.messages.slice(1), [
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_fn_1', name: 'weather', input: { city: 'Oslo' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_fn_1', content: [{ text: 'cold' }] } }] },
    ]);
    assert.deepEqual(request.toolConfig, { tools: [{ toolSpec: { name: 'weather', inputSchema: { json: { type: 'object' } } } }], toolChoice: { tool: { name: 'weather' } } });
  });

  it('a function message that answers no call → 400 naming it', () => {
    const e = refusal(converse({ ...base, messages: [{ role: 'user', content: 'x' }, { role: 'function', name: 'f', content: 'y' }] }));
    assert.equal(e.param, 'messages[1].name');
  });

  it("tool_choice none: no tools at all, unless the history holds tool blocks (Converse then needs toolConfig)", () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    assert.equal(convert({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'none' }).toolConfig, undefined);
    const withHistory = convert({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] },
        { role: 'tool', tool_call_id: 't1', content: '' },
      ],
      tools,
      tool_choice: 'none',
    });
    assert.deepEqual(withHistory.toolConfig, { tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }] });
    // Empty arguments are an empty input; an empty result is an empty list (Converse refuses blank text).
    assert.deepEqual(withHistory.messages[1]!.content, [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }]);
    assert.deepEqual(withHistory.messages[2]!.content, [{ toolResult: { toolUseId: 't1', content: [] } }]);
  });

  it('tool_choice auto and a named function; strict tools; cache_control → cachePoint', () => {
    const tools = [{ type: 'function', function: { name: 'f', strict: true, parameters: { type: 'object' } }, cache_control: { type: 'ephemeral' } }];
    assert.deepEqual(convert({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'auto' }).toolConfig, {
      tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } }, strict: true } }, { cachePoint: { type: 'default' } }],
      toolChoice: { auto: {} },
    });
    const named = convert({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice: { type: 'function', function: { name: 'f' } } });
    assert.deepEqual(named.toolConfig?.toolChoice, { tool: { name: 'f' } });
  });

  it('roles: system and developer lifted, consecutive turns merged, empty assistant turns left out', () => {
    const request = convert({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: 'a' },
        { role: 'developer', content: 'more rules' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: null },
        { role: 'assistant', content: [{ type: 'text', text: 'c' }, { type: 'refusal', refusal: 'no' }] },
      ],
    });
    assert.deepEqual(request.system, [{ text: 'rules' }, { cachePoint: { type: 'default' } }, { text: 'more rules' }]);
    assert.deepEqual(request.messages, [
      { role: 'user', content: [{ text: 'a' }, { text: 'b' }] },
      { role: 'assistant', content: [{ text: 'c' }, { text: 'no' }] },
    ]);
  });

  it('content parts: s3 images, PDF files, audio; unsupported ones → 400 naming the part', () => {
    const request = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 's3://bucket/cat.JPG' } },
            { type: 'file', file: { filename: 'Q3 report (final).v2.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
      ],
    });
    assert.deepEqual(request.messages[0]!.content, [
      { image: { format: 'jpeg', source: { s3Location: { uri: 's3://bucket/cat.JPG' } } } },
      { document: { format: 'pdf', name: 'Q3 report (final)-v2', source: { bytes: 'JVBERi0=' } } },
      { audio: { format: 'wav', source: { bytes: 'UklGRg==' } } },
    ]);
    const part = (p: unknown) => converse({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, p] }] });
    assert.equal(refusal(part({ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } })).param, 'messages[0].content[1].image_url.url');
    assert.match(refusal(part({ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } })).message, /image\/bmp/);
    assert.equal(refusal(part({ type: 'file', file: { file_id: 'file-1' } })).param, 'messages[0].content[1].file.file_data');
    assert.equal(refusal(part({ type: 'video_url' })).param, 'messages[0].content[1].type');
  });

  it('tool calls without a name, or with arguments that are not JSON text → 400 naming them', () => {
    const e = refusal(
      converse({
        ...base,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
        ],
      }),
    );
    assert.equal(e.param, 'messages[1].tool_calls[0].function.arguments');
    const notText = refusal(
      toConverse({ ...base, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 't', function: { name: 'f', arguments: { a: 1 } } }] }] }),
    );
    assert.match(notText.message, /must be a JSON string/);
    const noName = refusal(converse({ ...base, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 't' }] }] }));
    assert.equal(noName.param, 'messages[1].tool_calls[0].function.name');
  });

  it('sampling: max_completion_tokens wins over max_tokens; stop lists; json_object; service tier', () => {
    const request = convert({
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 10,
      max_completion_tokens: 20,
      stop: ['a', 'b'],
      response_format: { type: 'json_object' },
      service_tier: 'flex',
    });
    assert.deepEqual(request.inferenceConfig, { maxTokens: 20, stopSequences: ['a', 'b'] });
    assert.deepEqual(request.outputConfig, { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'json_object' } } } });
    assert.deepEqual(request.serviceTier, { type: 'flex' });
    assert.equal(convert({ messages: [{ role: 'user', content: 'x' }], service_tier: 'auto', response_format: { type: 'text' } }).serviceTier, undefined);
  });

  it("model parameters and Converse's own fields: thinking and top_k ride along, native fields pass as given", () => {
    const request = convert({
      messages: [{ role: 'user', content: 'x' }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      additionalModelRequestFields: { top_k: 3 },
      guardrailConfig: { guardrailIdentifier: 'g1', guardrailVersion: '1' },
      logit_bias: {},
      seed: 1,
      store: true,
    });
    assert.deepEqual(request.additionalModelRequestFields, { thinking: { type: 'enabled', budget_tokens: 1024 }, top_k: 3 });
    assert.deepEqual(request.guardrailConfig, { guardrailIdentifier: 'g1', guardrailVersion: '1' });
    assert.deepEqual(Object.keys(request).sort(), ['additionalModelRequestFields', 'guardrailConfig', 'messages']);
  });

  it('what Converse cannot do → 400 naming the field', () => {
    const msgs = [{ role: 'user', content: 'x' }];
    assert.equal(refusal(converse({ ...base, messages: msgs, logprobs: true })).param, 'logprobs');
    assert.equal(refusal(converse({ ...base, messages: msgs, modalities: ['text', 'audio'] })).param, 'modalities');
    assert.equal(refusal(converse({ ...base, messages: msgs, tools: [{ type: 'custom', custom: { name: 'x' } }] })).param, 'tools[0].type');
    assert.equal(refusal(converse({ ...base, messages: msgs, metadata: { n: 1 } })).param, 'metadata');
    assert.equal(refusal(converse({ messages: msgs })).param, 'model');
  });
});
