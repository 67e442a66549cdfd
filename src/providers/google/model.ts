/**
 * The model a Gemini API or Vertex AI URL names, from the request's `model`:
 * Google's own `models/…` resource name is taken too, and nothing that could
 * leave the URL's model segment.
 */
import { ok, type Result } from '../../shared/errors.js';
import { refuse } from '../shared/openai-request.js';

/** Characters of Google's model ids (`gemini-2.5-flash`, `textembedding-gecko@003`, `claude-sonnet-4@20250514`). */
const MODEL_ID = /^[\w.@-]+$/;

export function modelId(body: { model?: unknown }): Result<string> {
  const model = body.model;
  if (typeof model !== 'string' || model === '') return refuse('model', 'required');
  const id = model.startsWith('models/') ? model.slice(7) : model;
  return MODEL_ID.test(id) ? ok(id) : refuse('model', `'${model}' is not a model id (letters, digits, '.', '_', '-', '@')`);
}
