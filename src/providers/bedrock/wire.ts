/**
 * Bedrock Runtime's wire shapes, as far as the gateway reads or writes them.
 * Source: the service model of Bedrock Runtime 2023-09-30 (ConverseRequest,
 * ConverseResponse, ConverseStreamOutput, TokenUsage, …) and the model
 * parameter pages of the Bedrock user guide for the InvokeModel bodies of the
 * Titan and Cohere embedding models. Blobs travel as base64 strings in JSON.
 */

// ---- Converse request -------------------------------------------------------

export interface CachePointBlock {
  cachePoint: { type: 'default' };
}

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
export type DocumentFormat = 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md';

/** Bytes (base64 in JSON) or an S3 object. */
export type MediaSource = { bytes: string } | { s3Location: { uri: string } };

export interface ImageBlock {
  image: { format: ImageFormat; source: MediaSource };
}

export interface DocumentBlock {
  document: { format: DocumentFormat; name: string; source: MediaSource };
}

export interface AudioBlock {
  audio: { format: string; source: MediaSource };
}

export interface TextBlock {
  text: string;
}

export interface ToolUseBlock {
  toolUse: { toolUseId: string; name: string; input: unknown };
}

export type ToolResultContent = TextBlock | ImageBlock | DocumentBlock | { json: unknown };

export interface ToolResultBlock {
  toolResult: { toolUseId: string; content: ToolResultContent[]; status?: 'success' | 'error' };
}

export interface ReasoningBlock {
  reasoningContent: { reasoningText?: { text: string; signature?: string }; redactedContent?: string };
}

export type ContentBlock =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | AudioBlock
  | ToolUseBlock
  | ToolResultBlock
  | ReasoningBlock
  | CachePointBlock;

export type SystemContentBlock = TextBlock | CachePointBlock;

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface InferenceConfiguration {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

export interface ToolSpecification {
  toolSpec: { name: string; description?: string; inputSchema: { json: unknown }; strict?: boolean };
}

export type ToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ToolConfiguration {
  tools: (ToolSpecification | CachePointBlock)[];
  toolChoice?: ToolChoice;
}

export interface OutputConfig {
  textFormat: {
    type: 'json_schema';
    /** The schema travels as JSON text, not as an object. */
    structure: { jsonSchema: { schema: string; name?: string; description?: string } };
  };
}

/** The body of Converse and ConverseStream (modelId is in the path). */
export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: SystemContentBlock[];
  inferenceConfig?: InferenceConfiguration;
  toolConfig?: ToolConfiguration;
  outputConfig?: OutputConfig;
  additionalModelRequestFields?: Record<string, unknown>;
  requestMetadata?: Record<string, string>;
  serviceTier?: { type: string };
  /** Converse's own fields a client may send as they are (guardrailConfig, performanceConfig, …). */
  [native: string]: unknown;
}

// ---- Converse response ------------------------------------------------------

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | 'malformed_model_output'
  | 'malformed_tool_use'
  | 'model_context_window_exceeded';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/** A content block of the model's answer: only the members the gateway reads. */
export interface OutputContentBlock {
  text?: string;
  toolUse?: { toolUseId: string; name: string; input: unknown };
  reasoningContent?: { reasoningText?: { text: string; signature?: string }; redactedContent?: string };
}

export interface ConverseResponse {
  output: { message?: { role: 'assistant'; content: OutputContentBlock[] } };
  stopReason: StopReason;
  usage: TokenUsage;
  metrics?: { latencyMs: number };
}

// ---- ConverseStream events (the JSON payload of each eventstream message) ---

export interface MessageStartEvent {
  role: 'assistant';
}

export interface ContentBlockStartEvent {
  contentBlockIndex: number;
  start: { toolUse?: { toolUseId: string; name: string } };
}

export interface ContentBlockDeltaEvent {
  contentBlockIndex: number;
  delta: {
    text?: string;
    toolUse?: { input: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
}

export interface MessageStopEvent {
  stopReason: StopReason;
}

export interface MetadataEvent {
  usage: TokenUsage;
  metrics?: { latencyMs: number };
}

// ---- InvokeModel bodies of the embedding models -----------------------------

/** amazon.titan-embed-text-v2 (v1 takes inputText only). */
export interface TitanEmbedRequest {
  inputText: string;
  dimensions?: number;
  normalize?: boolean;
  [native: string]: unknown;
}

export interface TitanEmbedResponse {
  embedding: number[];
  inputTextTokenCount: number;
}

/** cohere.embed-english-v3, cohere.embed-multilingual-v3, cohere.embed-v4. */
export interface CohereEmbedRequest {
  texts: string[];
  input_type: string;
  output_dimension?: number;
  [native: string]: unknown;
}

export interface CohereEmbedResponse {
  id?: string;
  /** A list of vectors, or vectors per requested embedding type ({float: […]}). */
  embeddings: number[][] | Record<string, number[][]>;
}

/** Every Bedrock error body (the exception name is in the x-amzn-ErrorType header). */
export interface BedrockErrorBody {
  message?: string;
  Message?: string;
}
