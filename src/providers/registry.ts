/**
 * Provider name → provider (contract.ts: its adapter and translators).
 * Adding a provider is one folder and one line here (or one row in
 * openai/hosts.ts for the compatible family); its config keys go in its
 * settings.ts and one line of settings.ts.
 */
import { ENDPOINT_PATHS } from '../shared/endpoint.js';
import { err, invalid, ok, type GatewayError, type Result } from '../shared/errors.js';
import type { CallInput, Provider, ProviderAdapter, ProviderCall } from './contract.js';
import { openAICompatible } from './openai/adapter.js';
import { OPENAI_COMPATIBLE } from './openai/hosts.js';
import { nativeBody, responsesOverChat } from './responses/over-chat.js';
import type { TargetSettings } from './settings.js';

/** Every provider's adapter, as the router calls it: with the keys of every provider (each reads its own). */
export type Adapter = ProviderAdapter<TargetSettings>;

/**
 * Providers with their own module, loaded on first use: a deployment pays
 * the memory of a translator only for the providers it calls.
 */
const LOADED_ON_USE: Readonly<Record<string, () => Promise<Provider>>> = {
  anthropic: () => import('./anthropic/adapter.js').then((m) => m.anthropic),
  'azure-openai': () => import('./azure/adapter.js').then((m) => m.azureOpenAI),
  'azure-ai': () => import('./azure/adapter.js').then((m) => m.azureAI),
  bedrock: () => import('./bedrock/adapter.js').then((m) => m.bedrock),
  cohere: () => import('./cohere/adapter.js').then((m) => m.cohere),
  google: () => import('./google/adapter.js').then((m) => m.google),
  'vertex-ai': () => import('./vertex-ai/adapter.js').then((m) => m.vertexAI),
};

const adapters = new Map<string, Adapter>();
for (const [name, host] of Object.entries(OPENAI_COMPATIBLE)) adapters.set(name, openAICompatible(name, host).adapter);
const loading = new Map<string, Promise<Result<Adapter>>>();

/** The contract's neutral aliases of the three clouds. */
const ALIASES: Readonly<Record<string, string>> = { cloud1: 'bedrock', cloud2: 'vertex-ai', cloud3: 'azure-openai' };

export function canonicalProvider(name: string): string {
  return ALIASES[name] ?? name;
}

export function isKnownProvider(name: string): boolean {
  const canonical = canonicalProvider(name);
  return adapters.has(canonical) || Object.hasOwn(LOADED_ON_USE, canonical);
}

/**
 * Synchronous once the adapter is loaded (always, for the OpenAI-compatible
 * family). `@slug` providers are stored credentials, resolved before this.
 */
export function findAdapter(name: string): Result<Adapter> | Promise<Result<Adapter>> {
  const canonical = canonicalProvider(name);
  const adapter = adapters.get(canonical);
  if (adapter !== undefined) return ok(adapter);
  if (!Object.hasOwn(LOADED_ON_USE, canonical)) return err(invalid(`unknown provider '${name}'`, 'provider', 'unknown_provider'));
  let pending = loading.get(canonical);
  if (pending === undefined) {
    pending = LOADED_ON_USE[canonical]!().then((loaded) => {
      adapters.set(canonical, loaded.adapter);
      return ok(loaded.adapter);
    });
    loading.set(canonical, pending);
  }
  return pending;
}

/** The provider call for `input`: a 400 naming the provider when its API lacks the endpoint, else what its adapter prepares. */
export function prepareCall(adapter: Adapter, input: CallInput<TargetSettings>): Result<ProviderCall> | Promise<Result<ProviderCall>> {
  if (input.endpoint === 'responses') {
    if (adapter.nativeResponses !== true) return responsesOverChat(input, (chat) => prepareCall(adapter, chat), adapter.name);
    const sent = nativeBody(input.body);
    if (sent !== null) return withBody(adapter.prepare({ ...input, body: sent }), sent);
  }
  if (input.endpoint !== 'proxy') {
    const why = adapter.lacks[input.endpoint];
    if (why !== undefined) return err(notServed(adapter.name, input.endpoint, why));
  }
  return adapter.prepare(input);
}

/** A relayed call that would send the client's bytes sends `body` instead (the adapter edited nothing). */
function withBody(call: Result<ProviderCall> | Promise<Result<ProviderCall>>, body: Record<string, unknown>): Result<ProviderCall> | Promise<Result<ProviderCall>> {
  const set = (c: Result<ProviderCall>): Result<ProviderCall> => (c.ok && c.value.kind === 'relayed' && c.value.body === undefined ? ok({ ...c.value, body: JSON.stringify(body) }) : c);
  return call instanceof Promise ? call.then(set) : set(call);
}

function notServed(provider: string, endpoint: keyof typeof ENDPOINT_PATHS, why: string): GatewayError {
  return invalid(`provider '${provider}' does not serve ${ENDPOINT_PATHS[endpoint]}${why === '' ? '' : `: ${why}`}`, 'provider');
}

/** Every provider with a module of its own, loaded: for the conformance suite and the docs, which go through them all. */
export async function loadProviders(): Promise<Readonly<Record<string, Provider>>> {
  const entries = await Promise.all(Object.entries(LOADED_ON_USE).map(async ([name, load]) => [name, await load()] as const));
  return Object.fromEntries(entries);
}
