/**
 * Endpoint types: the names a policy's `endpoint_type` condition matches
 * (spec 1.13.0; "for example chatComplete, embed, imageGenerate"). They are
 * Portkey's names for what a request does; streamed and unstreamed calls of
 * one endpoint share a name. Anything without a name of its own is `proxy`.
 */
export const ENDPOINT_TYPES = [
  'chatComplete',
  'complete',
  'embed',
  'rerank',
  'moderate',
  'imageGenerate',
  'imageEdit',
  'createSpeech',
  'createTranscription',
  'createTranslation',
  'realtime',
  'messages',
  'messagesCountTokens',
  'createModelResponse',
  'getModelResponse',
  'deleteModelResponse',
  'listResponseInputItems',
  'uploadFile',
  'listFiles',
  'retrieveFile',
  'deleteFile',
  'retrieveFileContent',
  'createBatch',
  'listBatches',
  'retrieveBatch',
  'cancelBatch',
  'getBatchOutput',
  'createFinetune',
  'listFinetunes',
  'retrieveFinetune',
  'cancelFinetune',
  'proxy',
] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

/** `METHOD /path` after /v1, `:id` for one path segment. */
const ROUTES: readonly [string, EndpointType][] = [
  ['POST /chat/completions', 'chatComplete'],
  ['POST /completions', 'complete'],
  ['POST /embeddings', 'embed'],
  ['POST /rerank', 'rerank'],
  ['POST /moderations', 'moderate'],
  ['POST /images/generations', 'imageGenerate'],
  ['POST /images/edits', 'imageEdit'],
  ['POST /audio/speech', 'createSpeech'],
  ['POST /audio/transcriptions', 'createTranscription'],
  ['POST /audio/translations', 'createTranslation'],
  ['GET /realtime', 'realtime'],
  ['POST /messages', 'messages'],
  ['POST /messages/count_tokens', 'messagesCountTokens'],
  ['POST /responses', 'createModelResponse'],
  ['GET /responses/:id', 'getModelResponse'],
  ['DELETE /responses/:id', 'deleteModelResponse'],
  ['GET /responses/:id/input_items', 'listResponseInputItems'],
  ['POST /files', 'uploadFile'],
  ['GET /files', 'listFiles'],
  ['GET /files/:id', 'retrieveFile'],
  ['DELETE /files/:id', 'deleteFile'],
  ['GET /files/:id/content', 'retrieveFileContent'],
  ['POST /batches', 'createBatch'],
  ['GET /batches', 'listBatches'],
  ['GET /batches/:id', 'retrieveBatch'],
  ['POST /batches/:id/cancel', 'cancelBatch'],
  ['GET /batches/:id/output', 'getBatchOutput'],
  ['POST /fine_tuning/jobs', 'createFinetune'],
  ['GET /fine_tuning/jobs', 'listFinetunes'],
  ['GET /fine_tuning/jobs/:id', 'retrieveFinetune'],
  ['POST /fine_tuning/jobs/:id/cancel', 'cancelFinetune'],
];

/** Exact routes by `METHOD /path`; routes with an id by method and segment count (`:id` matches any one segment). */
const EXACT = new Map(ROUTES.filter(([r]) => !r.includes(':id')));
const PATTERNS = ROUTES.filter(([r]) => r.includes(':id')).map(([r, type]) => {
  const [method, path] = r.split(' ') as [string, string];
  return { method, segments: path.slice(1).split('/'), type };
});

/** The endpoint type of a model request: `path` is after /v1, without the query. */
export function endpointType(method: string, path: string): EndpointType {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const exact = EXACT.get(`${method} ${trimmed}`);
  if (exact !== undefined) return exact;
  const parts = trimmed.slice(1).split('/');
  for (const p of PATTERNS) {
    if (p.method === method && p.segments.length === parts.length && p.segments.every((s, i) => s === ':id' ? parts[i] !== '' : s === parts[i])) return p.type;
  }
  return 'proxy';
}
