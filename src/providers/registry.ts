/**
 * Provider name → adapter. Adding a provider is one folder and one line here
 * (or one row in openai/hosts.ts for the compatible family).
 */
import { invalid, ok, type GatewayError, type Result } from '../shared/errors.js';
import { openAICompatible } from './openai/adapter.js';
import { OPENAI_COMPATIBLE } from './openai/hosts.js';
import { askingUsage } from './shared/stream-usage.js';
import type { ProviderAdapter } from './types.js';

/**
 * Providers with their own wire format, loaded on first use: a deployment
 * pays the memory of a translator only for the providers it calls. The
 * translators' streams end with a usage chunk when asked, so they are asked
 * on every stream (shared/stream-usage.ts). Azure OpenAI takes the option
 * from some API versions on, and decides per call; Azure AI Foundry's models
 * are not known to take it.
 */
const TRANSLATED: Readonly<Record<string, () => Promise<ProviderAdapter>>> = {
  anthropic: () => import('./anthropic/adapter.js').then((m) => askingUsage(m.anthropicAdapter)),
  'azure-openai': () => import('./azure/adapter.js').then((m) => m.azureOpenAI),
  'azure-ai': () => import('./azure/foundry-adapter.js').then((m) => m.azureAI),
  bedrock: () => import('./bedrock/adapter.js').then((m) => askingUsage(m.bedrockAdapter)),
  cohere: () => import('./cohere/adapter.js').then((m) => askingUsage(m.cohere)),
  google: () => import('./google/adapter.js').then((m) => askingUsage(m.googleAdapter)),
  'vertex-ai': () => import('./vertex-ai/adapter.js').then((m) => askingUsage(m.vertexAdapter)),
};

const adapters = new Map<string, ProviderAdapter>();
for (const [name, host] of Object.entries(OPENAI_COMPATIBLE)) {
  const adapter = openAICompatible(name, host);
  adapters.set(name, host.streamUsage === 'on-request' ? askingUsage(adapter) : adapter);
}
const loading = new Map<string, Promise<Result<ProviderAdapter, GatewayError>>>();

/** The contract's neutral aliases of the three clouds. */
const ALIASES: Readonly<Record<string, string>> = { cloud1: 'bedrock', cloud2: 'vertex-ai', cloud3: 'azure-openai' };

export function canonicalProvider(name: string): string {
  return ALIASES[name] ?? name;
}

export function isKnownProvider(name: string): boolean {
  const canonical = canonicalProvider(name);
  return adapters.has(canonical) || Object.hasOwn(TRANSLATED, canonical);
}

/**
 * Synchronous once the adapter is loaded (always, for the OpenAI-compatible
 * family). `@slug` providers are stored credentials, resolved before this.
 */
export function findAdapter(name: string): Result<ProviderAdapter, GatewayError> | Promise<Result<ProviderAdapter, GatewayError>> {
  const canonical = canonicalProvider(name);
  const adapter = adapters.get(canonical);
  if (adapter !== undefined) return ok(adapter);
  if (!Object.hasOwn(TRANSLATED, canonical)) return { ok: false, error: invalid(`unknown provider '${name}'`, 'provider', 'unknown_provider') };
  let pending = loading.get(canonical);
  if (pending === undefined) {
    pending = TRANSLATED[canonical]!().then((loaded) => {
      adapters.set(canonical, loaded);
      return ok(loaded);
    });
    loading.set(canonical, pending);
  }
  return pending;
}
