/**
 * Fixed request and response bodies shared by the load generators, the
 * upstreams and the sanity checks, so every target answers the same bytes.
 */

const MODEL = 'gpt-4o-mini';
const MESSAGES = [{ role: 'user', content: 'Say hello.' }];

export const CHAT_REQUEST = JSON.stringify({ model: MODEL, messages: MESSAGES });
export const STREAM_REQUEST = JSON.stringify({ model: MODEL, messages: MESSAGES, stream: true });
export const EMBEDDINGS_REQUEST = JSON.stringify({ model: 'text-embedding-3-small', input: 'hello world' });

export const CHAT_RESPONSE = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1700000000,
  model: MODEL,
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 },
  system_fingerprint: 'fp_bench',
});

export const EMBEDDINGS_RESPONSE = JSON.stringify({
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: [0.0023, -0.0093, 0.0158, -0.0071, 0.0317, 0.0112, -0.0204, 0.0049] }],
  model: 'text-embedding-3-small',
  usage: { prompt_tokens: 2, total_tokens: 2 },
});

/** Delay between the first SSE event and the rest, so first byte and end of stream are far apart. */
export const STREAM_DELAY_MS = 20;

const DELTAS: { content?: string; role?: string }[] = [
  { role: 'assistant', content: '' },
  { content: 'Hello' },
  { content: '! How can I' },
  { content: ' help you today?' },
  {},
];

/** Five chat.completion.chunk events, each a complete `data: ...\n\n` SSE event. */
export const STREAM_EVENTS: string[] = DELTAS.map((delta, i) => {
  const chunk = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: MODEL,
    system_fingerprint: 'fp_bench',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: i === DELTAS.length - 1 ? 'stop' : null }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
});

export const STREAM_DONE = 'data: [DONE]\n\n';

/**
 * OpenAI's extra last chunk when the request sets stream_options.include_usage
 * (the gateway asks for it: every stream then reports its usage).
 */
export const STREAM_USAGE_EVENT = `data: ${JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: MODEL,
  system_fingerprint: 'fp_bench',
  choices: [],
  usage: { prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 },
})}\n\n`;
