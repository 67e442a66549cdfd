/**
 * Cohere API v2 shapes, as far as the translator reads or writes them.
 * Source: Cohere's OpenAPI description (cohere-ai/cohere-developer-experience,
 * `cohere-openapi.yaml`: paths /v2/chat and /v2/embed, schemas ChatMessageV2,
 * ToolV2, ResponseFormatV2, ChatResponseV2, Usage, the Chat*Event stream
 * events, EmbedByTypeResponse, ApiMeta and the error responses), rendered at
 * https://docs.cohere.com/reference/chat, /reference/chat-stream and
 * /reference/embed.
 */

// ---------------------------------------------------------------------------
// Chat request (POST /v2/chat)

export interface CohereTextContent {
  type: 'text';
  text: string;
}

export interface CohereImageContent {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface CohereThinkingContent {
  type: 'thinking';
  thinking: string;
}

export interface CohereSystemMessage {
  role: 'system';
  content: string | CohereTextContent[];
}

export interface CohereUserMessage {
  role: 'user';
  content: string | (CohereTextContent | CohereImageContent)[];
}

export interface CohereToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface CohereAssistantMessage {
  role: 'assistant';
  content?: string | CohereTextContent[];
  tool_calls?: CohereToolCall[];
  /** The model's reasoning before its tool calls; sent back with them. */
  tool_plan?: string;
}

export interface CohereToolMessage {
  role: 'tool';
  tool_call_id: string;
  /** A JSON string, or text / document blocks. */
  content: string | CohereTextContent[];
}

export type CohereMessage = CohereSystemMessage | CohereUserMessage | CohereAssistantMessage | CohereToolMessage;

export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export type CohereResponseFormat = { type: 'text' } | { type: 'json_object'; json_schema?: Record<string, unknown> };

export interface CohereThinking {
  type: 'enabled' | 'disabled';
  token_budget?: number;
}

export interface CohereChatRequest {
  model?: unknown;
  messages: CohereMessage[];
  stream?: boolean;
  tools?: CohereTool[];
  strict_tools?: boolean;
  tool_choice?: 'REQUIRED' | 'NONE';
  response_format?: CohereResponseFormat;
  max_tokens?: number;
  stop_sequences?: string[];
  temperature?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  /** Nucleus sampling: OpenAI's top_p. */
  p?: number;
  logprobs?: boolean;
  thinking?: CohereThinking;
  /** Cohere's own parameters (k, documents, citation_options, safety_mode, priority…) travel as the client sent them. */
  [native: string]: unknown;
}

// ---------------------------------------------------------------------------
// Chat response

export type CohereFinishReason = 'COMPLETE' | 'STOP_SEQUENCE' | 'MAX_TOKENS' | 'TOOL_CALL' | 'ERROR' | 'TIMEOUT';

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

/** One text chunk's tokens and their log probabilities. */
export interface CohereLogprobItem {
  text?: string;
  token_ids: number[];
  logprobs?: number[];
}

export interface CohereChatResponse {
  id: string;
  finish_reason: CohereFinishReason;
  message: {
    role: 'assistant';
    content?: (CohereTextContent | CohereThinkingContent)[];
    tool_calls?: CohereToolCall[];
    tool_plan?: string;
  };
  usage?: CohereUsage;
  logprobs?: CohereLogprobItem[];
}

// ---------------------------------------------------------------------------
// Chat stream events (`event: <type>` + `data: {json}`, then `data: [DONE]`)

export type CohereStreamEvent =
  | { type: 'message-start'; id?: string; delta?: { message?: { role?: 'assistant' } } }
  | { type: 'content-start'; index?: number; delta?: { message?: { content?: { type?: 'text' | 'thinking'; text?: string; thinking?: string } } } }
  | {
      type: 'content-delta';
      index?: number;
      delta?: { message?: { content?: { text?: string; thinking?: string } } };
      logprobs?: CohereLogprobItem;
    }
  | { type: 'content-end'; index?: number }
  | { type: 'tool-plan-delta'; delta?: { message?: { tool_plan?: string } } }
  | { type: 'tool-call-start'; index?: number; delta?: { message?: { tool_calls?: Partial<CohereToolCall> } } }
  | { type: 'tool-call-delta'; index?: number; delta?: { message?: { tool_calls?: { function?: { arguments?: string } } } } }
  | { type: 'tool-call-end'; index?: number }
  | { type: 'citation-start' | 'citation-end' | 'debug'; index?: number }
  | {
      type: 'message-end';
      id?: string;
      delta?: { error?: string; finish_reason?: CohereFinishReason; usage?: CohereUsage };
    };

// ---------------------------------------------------------------------------
// Embed (POST /v2/embed)

export interface CohereEmbedRequest {
  model?: unknown;
  texts: string[];
  /** search_document | search_query | classification | clustering | image; a client's own value goes on for Cohere to check. */
  input_type: unknown;
  embedding_types: ['float'];
  output_dimension?: number;
  /** Cohere's own parameters (truncate, max_tokens, priority) travel as the client sent them. */
  [native: string]: unknown;
}

export interface CohereEmbedResponse {
  id: string;
  embeddings: { float?: number[][] };
  texts?: string[];
  meta?: {
    billed_units?: { input_tokens?: number };
    tokens?: { input_tokens?: number };
  };
}

// ---------------------------------------------------------------------------
// Errors: every status answers `{"id"?: string, "message": string}`.

export interface CohereErrorBody {
  id?: string;
  message?: string;
}
