/**
 * The OpenAI-compatible family: providers that speak OpenAI's wire format at
 * their own base URL. Adding one is one row. `auth: 'none'` marks local
 * servers that need no key (a client's Authorization is still passed on);
 * `lacks` lists first-class endpoints the provider does not serve, so the
 * client gets a clear 400 instead of the provider's 404. `streamUsage` says
 * how the provider reports a stream's usage (shared/stream-usage.ts):
 * `on-request` where it answers OpenAI's stream_options.include_usage with
 * OpenAI's extra last chunk (OpenAI; Groq; Fireworks, whose newer models
 * report stream usage only so; DeepSeek; Ollama from 0.5.2, earlier versions
 * ignore the option; vLLM); `always` where it sends usage unasked (Mistral
 * refuses stream_options with a 422 and ends every stream with usage;
 * OpenRouter documents include_usage as having no effect, usage always
 * included; Together sends `usage` on every chunk, the totals on the last;
 * Perplexity sends cumulative usage on every chunk); `unknown` where neither
 * is established (xAI is reported to put the usage on the finish chunk,
 * which could not be stripped back exactly; LM Studio ignores the option):
 * the gateway does not ask, and counts the tokens when no usage comes.
 * `responses` marks a provider with OpenAI's Responses API; the others get
 * /responses over their chat API (responses/over-chat.ts).
 */
import type { StreamUsage } from '../shared/stream-usage.js';
import type { ModelEndpoint } from '../../shared/endpoint.js';

export interface CompatibleHost {
  /** Default base URL, ending before the endpoint path; null: a custom host is required. */
  baseUrl: string | null;
  auth: 'bearer' | 'none';
  lacks?: readonly ModelEndpoint[];
  streamUsage: StreamUsage;
  /** It serves OpenAI's Responses API: /responses is relayed, not served over its chat API. */
  responses?: true;
}

export const OPENAI_COMPATIBLE: Readonly<Record<string, CompatibleHost>> = {
  openai: { baseUrl: 'https://api.openai.com/v1', auth: 'bearer', streamUsage: 'on-request', responses: true },
  groq: { baseUrl: 'https://api.groq.com/openai/v1', auth: 'bearer', lacks: ['completions', 'embeddings'], streamUsage: 'on-request' },
  'together-ai': { baseUrl: 'https://api.together.xyz/v1', auth: 'bearer', streamUsage: 'always' },
  'fireworks-ai': { baseUrl: 'https://api.fireworks.ai/inference/v1', auth: 'bearer', streamUsage: 'on-request' },
  deepseek: { baseUrl: 'https://api.deepseek.com/v1', auth: 'bearer', lacks: ['embeddings'], streamUsage: 'on-request' },
  'mistral-ai': { baseUrl: 'https://api.mistral.ai/v1', auth: 'bearer', lacks: ['completions'], streamUsage: 'always' },
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', auth: 'bearer', streamUsage: 'always' },
  ollama: { baseUrl: 'http://127.0.0.1:11434/v1', auth: 'none', streamUsage: 'on-request' },
  'x-ai': { baseUrl: 'https://api.x.ai/v1', auth: 'bearer', streamUsage: 'unknown' },
  'perplexity-ai': { baseUrl: 'https://api.perplexity.ai', auth: 'bearer', lacks: ['completions', 'embeddings'], streamUsage: 'always' },
  deepinfra: { baseUrl: 'https://api.deepinfra.com/v1/openai', auth: 'bearer', streamUsage: 'unknown' },
  cerebras: { baseUrl: 'https://api.cerebras.ai/v1', auth: 'bearer', lacks: ['embeddings'], streamUsage: 'unknown' },
  sambanova: { baseUrl: 'https://api.sambanova.ai/v1', auth: 'bearer', streamUsage: 'unknown' },
  nebius: { baseUrl: 'https://api.studio.nebius.ai/v1', auth: 'bearer', streamUsage: 'unknown' },
  hyperbolic: { baseUrl: 'https://api.hyperbolic.xyz/v1', auth: 'bearer', streamUsage: 'unknown' },
  'novita-ai': { baseUrl: 'https://api.novita.ai/v3/openai', auth: 'bearer', streamUsage: 'unknown' },
  'lambda': { baseUrl: 'https://api.lambda.ai/v1', auth: 'bearer', streamUsage: 'unknown' },
  'nvidia-nim': { baseUrl: 'https://integrate.api.nvidia.com/v1', auth: 'bearer', streamUsage: 'unknown' },
  huggingface: { baseUrl: 'https://router.huggingface.co/v1', auth: 'bearer', streamUsage: 'unknown' },
  'lm-studio': { baseUrl: 'http://127.0.0.1:1234/v1', auth: 'none', streamUsage: 'unknown' },
  // Self-hosted servers (vLLM, TGI, llama.cpp…) live wherever the operator put them.
  vllm: { baseUrl: null, auth: 'none', streamUsage: 'on-request' },
  'openai-compatible': { baseUrl: null, auth: 'bearer', streamUsage: 'unknown' },
};
