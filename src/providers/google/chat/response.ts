/**
 * Gemini GenerateContentResponse → OpenAI chat.completion
 * (https://ai.google.dev/api/generate-content#generatecontentresponse).
 * The pieces (finish reasons, usage, parts → message fields, logprobs) are
 * shared with the stream translation.
 */
import { ok, type Result } from '../../../shared/errors.js';
import { completionId, nowSeconds, parseAnswer, putToolCalls, type FinishReason, type OpenAIToolCall, type OpenAIUsage } from '../../shared/openai-answer.js';
import { toolCallId } from '../tool-ids.js';
import type { GeminiCandidate, GeminiFinishReason, GeminiLogprobsResult, GeminiPart, GeminiUsageMetadata, GenerateContentResponse } from '../wire.js';

export interface ChatContext {
  /** Provider name, for messages. */
  provider: string;
  /** The model the client asked for: the answer's model when Gemini reports no modelVersion. */
  model: string;
}

/**
 * STOP is a natural end (or, with function calls, a tool turn); MAX_TOKENS the
 * length limit; the blocking reasons are content filtering. The rest
 * (LANGUAGE, OTHER, MALFORMED_FUNCTION_CALL, …) have no OpenAI counterpart
 * and end the choice as "stop".
 */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export function finishReason(reason: GeminiFinishReason | undefined, calledTools: boolean): FinishReason | null {
  if (reason === undefined) return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/**
 * Gemini counts thoughts apart from the answer and tool-use prompts apart
 * from the prompt; OpenAI's completion tokens include reasoning, and its
 * prompt everything the model read, so the totals add up either way.
 */
export function toUsage(u: GeminiUsageMetadata): OpenAIUsage {
  const prompt = (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0);
  const completion = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: u.totalTokenCount ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: u.cachedContentTokenCount ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.thoughtsTokenCount ?? 0 },
  };
}

/** What a candidate's parts say, in OpenAI's terms. */
export interface PartsDelta {
  content: string | null;
  reasoning: string | null;
  toolCalls: OpenAIToolCall[];
}

/**
 * Text parts are the content and thought parts the reasoning; function calls
 * become tool calls with fresh ids (carrying any thought signature); code the
 * code-execution tool ran, and its output, are shown as fenced text. Inline
 * media (image-output models) has no place in a chat message and is left out.
 */
export function readParts(parts: GeminiPart[] | undefined): PartsDelta {
  let content: string | null = null;
  let reasoning: string | null = null;
  const toolCalls: OpenAIToolCall[] = [];
  for (const p of parts ?? []) {
    if (p.functionCall !== undefined) {
      toolCalls.push({
        id: toolCallId(p.thoughtSignature),
        type: 'function',
        function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) },
      });
    } else if (typeof p.text === 'string') {
      if (p.thought === true) reasoning = (reasoning ?? '') + p.text;
      else content = (content ?? '') + p.text;
    } else if (p.executableCode !== undefined) {
      content = (content ?? '') + `\n\`\`\`${(p.executableCode.language ?? '').toLowerCase().replace('language_unspecified', '')}\n${p.executableCode.code ?? ''}\n\`\`\`\n`;
    } else if (p.codeExecutionResult !== undefined) {
      content = (content ?? '') + `\n\`\`\`\n${p.codeExecutionResult.output ?? ''}\n\`\`\`\n`;
    }
  }
  return { content, reasoning, toolCalls };
}

/** Gemini's chosen tokens and their top alternatives, as OpenAI's logprobs.content. */
export function toLogprobs(r: GeminiLogprobsResult | undefined): { content: unknown[]; refusal: null } | null {
  if (r?.chosenCandidates === undefined) return null;
  const entry = (c: { token?: string; logProbability?: number }) => ({
    token: c.token ?? '',
    logprob: c.logProbability ?? 0,
    bytes: [...Buffer.from(c.token ?? '', 'utf8')],
  });
  return {
    content: r.chosenCandidates.map((c, i) => ({ ...entry(c), top_logprobs: (r.topCandidates?.[i]?.candidates ?? []).map(entry) })),
    refusal: null,
  };
}

export function responseId(res: GenerateContentResponse): string {
  return res.responseId ?? completionId();
}

export function createdAt(res: GenerateContentResponse): number {
  const t = res.createTime === undefined ? NaN : Date.parse(res.createTime);
  return Number.isNaN(t) ? nowSeconds() : Math.floor(t / 1000);
}

export function toChatCompletion(res: GenerateContentResponse, ctx: ChatContext): Record<string, unknown> {
  const candidates: GeminiCandidate[] = res.candidates ?? [];
  // A prompt Gemini blocked gets no candidate at all: one empty, filtered choice says so.
  const choices =
    candidates.length === 0
      ? [{ index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'content_filter' }]
      : candidates.map((c, i) => {
          const { content, reasoning, toolCalls } = readParts(c.content?.parts);
          const message: Record<string, unknown> = { role: 'assistant', content, refusal: null };
          if (reasoning !== null) message.reasoning_content = reasoning;
          putToolCalls(message, toolCalls, false); // Gemini's answers use tool_calls, whatever the request named
          return {
            index: c.index ?? i,
            message,
            logprobs: toLogprobs(c.logprobsResult),
            finish_reason: finishReason(c.finishReason, toolCalls.length > 0) ?? 'stop',
          };
        });
  const out: Record<string, unknown> = {
    id: responseId(res),
    object: 'chat.completion',
    created: createdAt(res),
    model: res.modelVersion ?? ctx.model,
    choices,
  };
  if (res.usageMetadata !== undefined) out.usage = toUsage(res.usageMetadata);
  return out;
}

/** A whole GenerateContentResponse as OpenAI JSON text. */
export function readChatCompletion(raw: Buffer, ctx: ChatContext): Result<string> {
  const parsed = parseAnswer(raw, ctx.provider);
  return parsed.ok ? ok(JSON.stringify(toChatCompletion(parsed.value as GenerateContentResponse, ctx))) : parsed;
}
