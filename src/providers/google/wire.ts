/**
 * Gemini's wire shapes: the GenerateContent request and response (Gemini API
 * v1beta and Vertex AI v1 share them), the embedding calls, and the error
 * body. Only the fields this gateway writes or reads are typed.
 *
 * Sources: https://ai.google.dev/api/generate-content,
 * https://ai.google.dev/api/caching#Content, https://ai.google.dev/api/embeddings,
 * https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.endpoints/generateContent
 */

export type GeminiRole = 'user' | 'model';

export interface GeminiFunctionCall {
  name: string;
  args?: Record<string, unknown>;
  /** Set by the Gemini API on some answers; Vertex v1 has no such field, so the gateway never sends it. */
  id?: string;
}

export interface GeminiFunctionResponse {
  name: string;
  response: Record<string, unknown>;
}

/** A Part holds exactly one of the data fields. */
export interface GeminiPart {
  text?: string;
  /** A thought summary (thinking models with includeThoughts). */
  thought?: boolean;
  /** Opaque reasoning state the model wants back with the part it came on (required for function calls on Gemini 3). */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
  /** Code the code-execution tool ran, and what it printed (answers only). */
  executableCode?: { language?: string; code?: string };
  codeExecutionResult?: { outcome?: string; output?: string };
}

export interface GeminiContent {
  role?: GeminiRole;
  parts: GeminiPart[];
}

/** The OpenAPI 3.0 subset Gemini takes for function parameters and response schemas. */
export interface GeminiSchema {
  type?: 'STRING' | 'NUMBER' | 'INTEGER' | 'BOOLEAN' | 'ARRAY' | 'OBJECT';
  format?: string;
  title?: string;
  description?: string;
  nullable?: boolean;
  enum?: string[];
  items?: GeminiSchema;
  minItems?: string;
  maxItems?: string;
  properties?: Record<string, GeminiSchema>;
  propertyOrdering?: string[];
  required?: string[];
  minProperties?: string;
  maxProperties?: string;
  minLength?: string;
  maxLength?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  anyOf?: GeminiSchema[];
  default?: unknown;
  example?: unknown;
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

/** A Tool: function declarations, or one of Gemini's built-in tools. */
export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[];
  googleSearch?: Record<string, unknown>;
  codeExecution?: Record<string, unknown>;
  urlContext?: Record<string, unknown>;
}

export type FunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GeminiToolConfig {
  functionCallingConfig: { mode: FunctionCallingMode; allowedFunctionNames?: string[] };
}

export interface GeminiThinkingConfig {
  includeThoughts?: boolean;
  thinkingBudget?: number;
  thinkingLevel?: string;
}

export interface GeminiGenerationConfig {
  stopSequences?: string[];
  responseMimeType?: string;
  responseSchema?: GeminiSchema;
  candidateCount?: number;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseLogprobs?: boolean;
  logprobs?: number;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
  safetySettings?: unknown[];
  cachedContent?: string;
}

export type GeminiFinishReason =
  | 'FINISH_REASON_UNSPECIFIED'
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'LANGUAGE'
  | 'OTHER'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'MALFORMED_FUNCTION_CALL'
  | 'IMAGE_SAFETY'
  | (string & {});

export interface GeminiLogprobsCandidate {
  token?: string;
  logProbability?: number;
}

export interface GeminiLogprobsResult {
  topCandidates?: { candidates?: GeminiLogprobsCandidate[] }[];
  chosenCandidates?: GeminiLogprobsCandidate[];
}

export interface GeminiCandidate {
  content?: GeminiContent;
  finishReason?: GeminiFinishReason;
  index?: number;
  logprobsResult?: GeminiLogprobsResult;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** Vertex AI only: when the answer was created (RFC 3339). */
  createTime?: string;
}

/** Google's error body (google.rpc.Status in JSON). */
export interface GoogleErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: unknown[] };
}
