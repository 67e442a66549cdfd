/**
 * Where a chat request for the Azure AI Model Inference API differs from
 * OpenAI's (https://learn.microsoft.com/azure/ai-studio/reference/reference-model-inference-chat-completions):
 * the API knows `max_tokens` but not `max_completion_tokens`, and the roles
 * system, user, assistant and tool but not `developer`. Everything else is
 * OpenAI's shape (messages, image parts, tools and tool_choice, tool results,
 * response_format, stop, seed, temperature, top_p, stream) and stays as sent;
 * parameters the API does not list reach the model through the
 * `extra-parameters: pass-through` header the adapter sends.
 */

interface ChatMessage {
  role?: unknown;
  [field: string]: unknown;
}

interface ChatRequest {
  messages?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  [field: string]: unknown;
}

/** The request as the Model Inference API takes it, or null when it needs no change (its bytes then go as sent). */
export function toInferenceChat(body: ChatRequest): ChatRequest | null {
  let out: ChatRequest | null = null;
  if (body.max_completion_tokens !== undefined) {
    out = { ...body };
    // Same meaning; OpenAI's current name wins when a client sends both.
    out.max_tokens = body.max_completion_tokens;
    delete out.max_completion_tokens;
  }
  if (Array.isArray(body.messages) && body.messages.some(isDeveloper)) {
    out ??= { ...body };
    // OpenAI's developer messages are the system instructions under their newer name.
    out.messages = body.messages.map((m: unknown) => (isDeveloper(m) ? { ...(m as ChatMessage), role: 'system' } : m));
  }
  return out;
}

function isDeveloper(m: unknown): boolean {
  return typeof m === 'object' && m !== null && (m as ChatMessage).role === 'developer';
}
