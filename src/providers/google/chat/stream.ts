/**
 * Gemini's streamGenerateContent?alt=sse → OpenAI chat.completion.chunk SSE.
 *
 * Gemini frames each partial GenerateContentResponse as one server-sent event,
 * `data: {…}` followed by a blank line (CRLF line ends, as Google's frontends
 * send them, or LF); text arrives as deltas, a function call whole in one
 * part, the finishReason on the candidate's last event and usageMetadata
 * (running totals) on every event, complete on the last
 * (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).
 * Each event becomes one chunk per candidate. The stream is whole once every
 * candidate has its finishReason (or the prompt was blocked); it then ends,
 * as every translated stream does (shared/stream.ts), with the usage chunk
 * and `data: [DONE]`. An error event ends it with OpenAI's in-stream
 * `data: {"error":…}`.
 */
import type { FinishReason, OpenAIUsage } from '../../shared/openai-answer.js';
import { HELD_ENTRY, SseTranslatedStream } from '../../shared/stream.js';
import { createdAt, finishReason, readParts, responseId, toLogprobs, toUsage, type ChatContext } from './response.js';
import { googleError } from '../errors.js';
import type { GenerateContentResponse } from '../wire.js';

export class GeminiStream extends SseTranslatedStream {
  private identified = false;
  private usage: OpenAIUsage | undefined;
  /** Per candidate index, once it has begun: how many tool calls it has streamed (their OpenAI indexes). */
  private readonly toolCalls = new Map<number, number>();
  /** Candidates whose finishReason has come. */
  private readonly finished = new Set<number>();
  private blocked = false;

  constructor(private readonly ctx: ChatContext) {
    super(ctx.provider, ctx.model, 'every candidate had its finishReason');
  }

  protected override decodeEnd(): void {
    super.decodeEnd();
    const whole = this.blocked || (this.finished.size > 0 && this.finished.size === this.toolCalls.size);
    if (!this.ended && whole) this.complete(this.usage);
  }

  protected override event(data: unknown): void {
    const res = data as GenerateContentResponse & { error?: { code?: unknown } };
    if (res.error !== undefined) {
      const status = typeof res.error.code === 'number' ? res.error.code : 500;
      this.fail(googleError(status, Buffer.from(JSON.stringify(res))));
      return;
    }
    if (!this.identified) {
      this.identified = true;
      this.id = responseId(res);
      this.created = createdAt(res);
      this.model = res.modelVersion ?? this.ctx.model;
    }
    // Running totals on every event, complete on the last.
    if (res.usageMetadata !== undefined) this.usage = toUsage(res.usageMetadata);

    const candidates = res.candidates ?? [];
    if (candidates.length === 0 && res.promptFeedback?.blockReason !== undefined) {
      this.blocked = true;
      this.candidateChunk(0, {}, 'content_filter', null);
      return;
    }
    candidates.forEach((c, position) => {
      if (this.ended) return;
      const index = c.index ?? position;
      const { content, reasoning, toolCalls } = readParts(c.content?.parts);
      const delta: Record<string, unknown> = {};
      if (content !== null) delta.content = content;
      if (reasoning !== null) delta.reasoning_content = reasoning;
      let streamed = this.toolCalls.get(index) ?? 0;
      if (toolCalls.length > 0) {
        delta.tool_calls = toolCalls.map((call) => ({ index: streamed++, ...call }));
      }
      const finish = finishReason(c.finishReason, streamed > 0);
      if (finish !== null) this.finished.add(index);
      const logprobs = toLogprobs(c.logprobsResult);
      if (Object.keys(delta).length === 0 && finish === null && logprobs === null) return;
      this.candidateChunk(index, delta, finish, logprobs);
      this.toolCalls.set(index, streamed);
    });
  }

  /** One chunk for one candidate; its first chunk also names the role, as OpenAI's do. */
  private candidateChunk(index: number, delta: Record<string, unknown>, finish: FinishReason | null, logprobs: unknown): void {
    if (!this.toolCalls.has(index)) {
      if (!this.hold(HELD_ENTRY)) return;
      this.toolCalls.set(index, 0);
      delta = { role: 'assistant', ...delta };
      if (delta.content === undefined) delta.content = delta.tool_calls === undefined ? '' : null;
    }
    this.chunk(delta, finish, logprobs, index);
  }
}
