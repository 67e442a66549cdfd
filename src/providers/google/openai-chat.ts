/**
 * The OpenAI chat request as the Gemini translation reads it. The body has
 * passed the gateway's validation (server/validation.ts): roles, content
 * types and the shapes of tools, tool_choice and response_format are known;
 * anything deeper is checked where it is translated.
 */

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
}

export interface AudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}

export interface FilePart {
  type: 'file';
  file: { file_data?: string; file_id?: string; filename?: string };
}

export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}

export type ContentPart = TextPart | ImagePart | AudioPart | FilePart | RefusalPart | { type: string };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  function_call?: { name: string; arguments: string };
}

export interface FunctionDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export interface ChatTool {
  type: string;
  function?: FunctionDefinition;
  [config: string]: unknown;
}

export type ToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; function: { name: string } }
  | { type: 'allowed_tools'; allowed_tools: { mode: 'auto' | 'required'; tools: { type: string; function?: { name: string } }[] } }
  | { type: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean } };

export interface ChatRequest {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stop?: string | string[] | null;
  n?: number | null;
  seed?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  response_format?: ResponseFormat;
  tools?: ChatTool[];
  tool_choice?: ToolChoice;
  functions?: FunctionDefinition[];
  function_call?: 'none' | 'auto' | { name: string };
  reasoning_effort?: string | null;
  /** Anthropic-style extended thinking (allowed with strict_compat_compliance false). */
  thinking?: { type: 'enabled' | 'disabled'; budget_tokens?: number };
  /** Gemini's own fields, accepted as they are. */
  safety_settings?: unknown[];
  cached_content?: string;
}
