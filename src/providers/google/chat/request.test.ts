// OpenAI chat request → Gemini GenerateContentRequest.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { geminiChat, toGenerateContent } from './request.js';
import type { ChatRequest } from '../../shared/openai-request.js';

const translate = (body: Partial<ChatRequest>) => toGenerateContent({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], ...body } as ChatRequest, 'google');

function request(body: Partial<ChatRequest>) {
  const r = translate(body);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  return r.value;
}

function refused(body: Partial<ChatRequest>): { message: string; param: string | null } {
  const r = translate(body);
  assert.ok(!r.ok, 'expected a 400');
  assert.equal(r.error.status, 400);
  return { message: r.error.message, param: r.error.param };
}

describe('chat request → generateContent', () => {
  it('merges consecutive turns of one role and skips empty system and assistant texts', () => {
    const r = request({
      messages: [
        { role: 'system', content: '' },
        { role: 'user', content: 'a' },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'c' },
        { role: 'assistant', content: [{ type: 'text', text: 'd' }, { type: 'refusal', refusal: 'no' }] },
      ],
    });
    assert.deepEqual(r.contents, [
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] },
      { role: 'model', parts: [{ text: 'd' }, { text: 'no' }] },
    ]);
    assert.equal(r.systemInstruction, undefined);
  });

  it('media parts: data URLs inline (base64 or not), URLs as file references with a guessed type, audio and files', () => {
    const r = request({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:text/plain,hello%20there' } },
            { type: 'image_url', image_url: { url: 'gs://bucket/photo.JPG' } },
            { type: 'image_url', image_url: { url: 'https://example.com/no-extension' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'file', file: { file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc', filename: 'notes.txt' } },
          ],
        },
      ],
    });
    assert.deepEqual(r.contents[0]!.parts, [
      { inlineData: { mimeType: 'text/plain', data: Buffer.from('hello there').toString('base64') } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/photo.JPG' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/no-extension' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc', mimeType: 'text/plain' } },
    ]);
    assert.equal(refused({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }).param, 'messages[0].content[0].image_url.url');
    assert.equal(refused({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'ogg' } }] }] }).param, 'messages[0].content[0].input_audio.format');
    assert.equal(refused({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] } as never] }).param, 'messages[0].content[0].type');
  });

  it('legacy function messages and function_call', () => {
    const r = request({
      messages: [
        { role: 'user', content: 'time?' },
        { role: 'assistant', content: null, function_call: { name: 'now', arguments: '' } },
        { role: 'function', name: 'now', content: '"12:00"' },
      ],
      functions: [{ name: 'now', description: 'the time' }],
      function_call: { name: 'now' },
    });
    assert.deepEqual(r.contents.slice(1), [
      { role: 'model', parts: [{ functionCall: { name: 'now', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'now', response: { output: '12:00' } } }] },
    ]);
    assert.deepEqual(r.tools, [{ functionDeclarations: [{ name: 'now', description: 'the time' }] }]);
    assert.deepEqual(r.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] } });
  });

  it('tool_choice in all its forms; built-in tools; unknown tool types refused', () => {
    const tools = [
      { type: 'function', function: { name: 'a', parameters: { type: 'object', properties: { x: { type: 'string' } } } } },
      { type: 'function', function: { name: 'b' } },
      { type: 'google_search', google_search: {} },
    ];
    assert.deepEqual(request({ tools, tool_choice: 'none' }).toolConfig, { functionCallingConfig: { mode: 'NONE' } });
    assert.deepEqual(request({ tools, tool_choice: 'auto' }).toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
    const narrowed = request({ tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'b' } }] } } });
    assert.deepEqual(narrowed.toolConfig, { functionCallingConfig: { mode: 'ANY' } });
    assert.deepEqual(narrowed.tools, [{ functionDeclarations: [{ name: 'b' }] }, { googleSearch: {} }]);
    assert.equal(refused({ tools, tool_choice: { type: 'function', function: { name: 'zz' } } }).param, 'tool_choice.function.name');
    assert.equal(refused({ tools: [{ type: 'custom', custom: { name: 'c' } }] }).param, 'tools[0].type');
    assert.equal(refused({ tool_choice: { type: 'custom' } }).param, 'tool_choice.type');
  });

  it('generation config: max_completion_tokens wins over max_tokens, a stop string, logprobs, top_k, Gemini’s own fields', () => {
    const r = request({
      max_tokens: 10,
      max_completion_tokens: 20,
      stop: 'STOP',
      logprobs: true,
      top_logprobs: 3,
      top_k: 40,
      temperature: null,
      safety_settings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      cached_content: 'cachedContents/abc',
    });
    assert.deepEqual(r.generationConfig, { topK: 40, maxOutputTokens: 20, stopSequences: ['STOP'], responseLogprobs: true, logprobs: 3 });
    assert.deepEqual(r.safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }]);
    assert.equal(r.cachedContent, 'cachedContents/abc');
    assert.deepEqual(request({ max_tokens: 10 }).generationConfig, { maxOutputTokens: 10 });
  });

  it('thinking: reasoning_effort as a budget (2.5) or a level (3); Anthropic-style thinking', () => {
    assert.deepEqual(request({ reasoning_effort: 'high' }).generationConfig, { thinkingConfig: { thinkingBudget: 24576 } });
    assert.deepEqual(request({ reasoning_effort: 'none' }).generationConfig, { thinkingConfig: { thinkingBudget: 0 } });
    assert.deepEqual(request({ model: 'gemini-3-pro-preview', reasoning_effort: 'low' }).generationConfig, { thinkingConfig: { thinkingLevel: 'low' } });
    assert.deepEqual(request({ thinking: { type: 'enabled', budget_tokens: 2048 } }).generationConfig, {
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    });
    assert.equal(refused({ reasoning_effort: 'extreme' }).param, 'reasoning_effort');
  });

  it('fields: dropped by rule, refused otherwise; a null means unset', () => {
    const r = translate({ user: 'u', logit_bias: { '1': 2 }, parallel_tool_calls: false, store: true, metadata: { a: 'b' }, service_tier: 'auto' } as never);
    assert.ok(r.ok);
    assert.equal(r.value.generationConfig, undefined);
    assert.ok(translate({ prediction: null } as never).ok);
    const e = refused({ prediction: { type: 'content', content: 'x' } } as never);
    assert.equal(e.param, 'prediction');
    assert.match(e.message, /not supported by provider 'google'/);
  });

  it('stream flags: a streamed answer, whose usage chunk is stripped unless asked for', () => {
    const asked = geminiChat('google').request({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    assert.ok(asked.ok && asked.value.answer.streamed);
    assert.equal(asked.value.answer.addedUsage, false);
    const unasked = geminiChat('google').request({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.ok(unasked.ok && unasked.value.answer.streamed && unasked.value.answer.addedUsage);
  });
});
