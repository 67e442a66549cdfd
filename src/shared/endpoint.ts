/**
 * The gateway's first-class endpoints, named once for every layer: the
 * pipeline routes by them, providers translate them, logs and spans record
 * them. Anything else under /v1 is the generic proxy.
 */
export type Endpoint = 'chat' | 'completions' | 'embeddings' | 'responses' | 'proxy';

/** The endpoints with a body the gateway reads, validates and may translate. */
export type ModelEndpoint = Exclude<Endpoint, 'proxy'>;

export const ENDPOINT_PATHS: Record<ModelEndpoint, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  responses: '/responses',
};
