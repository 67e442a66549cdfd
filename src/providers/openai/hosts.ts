/**
 * The OpenAI-compatible family: providers that speak OpenAI's wire format at
 * their own base URL. Adding one is one row. `auth: 'none'` marks local
 * servers that need no key (a client's Authorization is still passed on);
 * `lacks` lists first-class endpoints the provider does not serve, so the
 * client gets a clear 400 instead of the provider's 404.
 */
import type { Endpoint } from '../types.js';

export interface CompatibleHost {
  /** Default base URL, ending before the endpoint path; null: a custom host is required. */
  baseUrl: string | null;
  auth: 'bearer' | 'none';
  lacks?: readonly Endpoint[];
}

export const OPENAI_COMPATIBLE: Readonly<Record<string, CompatibleHost>> = {
  openai: { baseUrl: 'https://api.openai.com/v1', auth: 'bearer' },
  groq: { baseUrl: 'https://api.groq.com/openai/v1', auth: 'bearer', lacks: ['completions', 'embeddings'] },
  'together-ai': { baseUrl: 'https://api.together.xyz/v1', auth: 'bearer' },
  'fireworks-ai': { baseUrl: 'https://api.fireworks.ai/inference/v1', auth: 'bearer' },
  deepseek: { baseUrl: 'https://api.deepseek.com/v1', auth: 'bearer', lacks: ['embeddings'] },
  'mistral-ai': { baseUrl: 'https://api.mistral.ai/v1', auth: 'bearer', lacks: ['completions'] },
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', auth: 'bearer' },
  ollama: { baseUrl: 'http://127.0.0.1:11434/v1', auth: 'none' },
  'x-ai': { baseUrl: 'https://api.x.ai/v1', auth: 'bearer' },
  'perplexity-ai': { baseUrl: 'https://api.perplexity.ai', auth: 'bearer', lacks: ['completions', 'embeddings'] },
  deepinfra: { baseUrl: 'https://api.deepinfra.com/v1/openai', auth: 'bearer' },
  cerebras: { baseUrl: 'https://api.cerebras.ai/v1', auth: 'bearer', lacks: ['embeddings'] },
  sambanova: { baseUrl: 'https://api.sambanova.ai/v1', auth: 'bearer' },
  nebius: { baseUrl: 'https://api.studio.nebius.ai/v1', auth: 'bearer' },
  hyperbolic: { baseUrl: 'https://api.hyperbolic.xyz/v1', auth: 'bearer' },
  'novita-ai': { baseUrl: 'https://api.novita.ai/v3/openai', auth: 'bearer' },
  'lambda': { baseUrl: 'https://api.lambda.ai/v1', auth: 'bearer' },
  'nvidia-nim': { baseUrl: 'https://integrate.api.nvidia.com/v1', auth: 'bearer' },
  huggingface: { baseUrl: 'https://router.huggingface.co/v1', auth: 'bearer' },
  'lm-studio': { baseUrl: 'http://127.0.0.1:1234/v1', auth: 'none' },
  // Self-hosted servers (vLLM, TGI, llama.cpp…) live wherever the operator put them.
  vllm: { baseUrl: null, auth: 'none' },
  'openai-compatible': { baseUrl: null, auth: 'bearer' },
};
