/**
 * Provider name → adapter. Adding a provider is one folder and one line here
 * (or one row in openai/hosts.ts for the compatible family).
 */
import { invalid, ok, type GatewayError, type Result } from '../shared/errors.js';
import { anthropicAdapter } from './anthropic/adapter.js';
import { azureAI } from './azure/foundry-adapter.js';
import { azureOpenAI } from './azure/openai-adapter.js';
import { bedrockAdapter } from './bedrock/adapter.js';
import { cohere } from './cohere/adapter.js';
import { googleAdapter } from './google/adapter.js';
import { openAICompatible } from './openai/adapter.js';
import { OPENAI_COMPATIBLE } from './openai/hosts.js';
import type { ProviderAdapter } from './types.js';
import { vertexAdapter } from './vertex-ai/adapter.js';

const adapters = new Map<string, ProviderAdapter>();
for (const [name, host] of Object.entries(OPENAI_COMPATIBLE)) adapters.set(name, openAICompatible(name, host));
adapters.set(anthropicAdapter.name, anthropicAdapter);
adapters.set(azureOpenAI.name, azureOpenAI);
adapters.set(azureAI.name, azureAI);
adapters.set(bedrockAdapter.name, bedrockAdapter);
adapters.set(cohere.name, cohere);
adapters.set(googleAdapter.name, googleAdapter);
adapters.set(vertexAdapter.name, vertexAdapter);

/** The contract's neutral aliases of the three clouds. */
const ALIASES: Readonly<Record<string, string>> = { cloud1: 'bedrock', cloud2: 'vertex-ai', cloud3: 'azure-openai' };

export function canonicalProvider(name: string): string {
  return ALIASES[name] ?? name;
}

export function findAdapter(name: string): Result<ProviderAdapter, GatewayError> {
  if (name.startsWith('@')) {
    return { ok: false, error: invalid(`unknown provider slug '${name}': no integration defines it`, 'provider', 'unknown_provider') };
  }
  const adapter = adapters.get(canonicalProvider(name));
  return adapter === undefined
    ? { ok: false, error: invalid(`unknown provider '${name}'`, 'provider', 'unknown_provider') }
    : ok(adapter);
}
