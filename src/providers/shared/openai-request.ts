/**
 * OpenAI's chat messages as translators read them. The body validator checks
 * roles and the outline only, so what a tool call holds is unknown until the
 * translator checks it; each translator names its own content parts.
 */

export interface OpenAIFunctionCallParam {
  name?: unknown;
  arguments?: unknown;
}

export interface OpenAIToolCallParam {
  id?: unknown;
  type?: unknown;
  function?: OpenAIFunctionCallParam;
}

export interface OpenAIMessageParam<Part> {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: string | Part[] | null;
  name?: string;
  tool_calls?: OpenAIToolCallParam[];
  tool_call_id?: string;
  function_call?: OpenAIFunctionCallParam | null;
}
