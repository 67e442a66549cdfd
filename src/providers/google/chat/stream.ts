/**
 * Gemini's streamGenerateContent?alt=sse → OpenAI chat.completion.chunk SSE.
 *
 * Gemini frames each partial GenerateContentResponse as one server-sent event,
 * `data: {…}` followed by a blank line (CRLF line ends, as Google's frontends
 * send them, or LF); text arrives as deltas, a function call whole in one
 * part, the finishReason on the candidate's last event and usageMetadata
 * (running totals) on every event, complete on the last
 * (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).
 * Each event becomes one chunk per candidate; the usage chunk (when asked
 * for) and `data: [DONE]` close the stream. An error event becomes OpenAI's
 * in-stream `data: {"error":…}`.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../../../shared/errors.js';
import { chatChunk, completionId, nowSeconds, SSE_DONE, sseEvent, usageChunk, type FinishReason } from '../../shared/openai-answer.js';
import { SseReader, type SseEvent } from '../../shared/sse.js';
import { createdAt, finishReason, readParts, responseId, toLogprobs, toUsage, type ChatContext } from './response.js';
import { googleError } from '../errors.js';
import type { GeminiUsageMetadata, GenerateContentResponse } from '../wire.js';

export class GeminiStream extends Transform {
  private readonly reader = new SseReader();
  private id: string | undefined;
  private model: string;
  private created = 0;
  private usage: GeminiUsageMetadata | undefined;
  /** Per candidate index: how many tool calls it has streamed (their OpenAI indexes), once it has begun. */
  private readonly toolCalls = new Map<number, number>();

  constructor(private readonly ctx: ChatContext) {
    super();
    this.model = ctx.model;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    for (const ev of this.reader.push(chunk)) this.event(ev);
    done();
  }

  override _flush(done: TransformCallback): void {
    // A last event without its blank line still counts (SseReader.end).
    for (const ev of this.reader.end()) this.event(ev);
    if (this.ctx.includeUsage && this.usage !== undefined) {
      this.push(sseEvent(usageChunk(this.id ?? completionId(), this.model, this.created || nowSeconds(), toUsage(this.usage))));
    }
    this.push(SSE_DONE);
    done();
  }

  private event({ data }: SseEvent): void {
    if (data === '') return;
    let res: GenerateContentResponse & { error?: unknown };
    try {
      res = JSON.parse(data) as GenerateContentResponse & { error?: unknown };
    } catch {
      this.push(sseEvent(new GatewayError(502, `${this.ctx.provider} sent a stream event that is not JSON`, { code: 'bad_upstream_event' }).toJSON()));
      return;
    }
    if (res.error !== undefined) {
      const status = typeof (res.error as { code?: unknown }).code === 'number' ? (res.error as { code: number }).code : 500;
      this.push(sseEvent(googleError(status, Buffer.from(data)).toJSON()));
      return;
    }
    if (this.id === undefined) {
      this.id = responseId(res);
      this.created = createdAt(res);
      this.model = res.modelVersion ?? this.ctx.model;
    }
    if (res.usageMetadata !== undefined) this.usage = res.usageMetadata;

    const candidates = res.candidates ?? [];
    if (candidates.length === 0 && res.promptFeedback?.blockReason !== undefined) {
      this.chunk(0, {}, 'content_filter', null);
      return;
    }
    candidates.forEach((c, position) => {
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
      const logprobs = toLogprobs(c.logprobsResult);
      if (Object.keys(delta).length === 0 && finish === null && logprobs === null) return;
      this.chunk(index, delta, finish, logprobs);
      this.toolCalls.set(index, streamed);
    });
  }

  /** One chunk for one candidate; its first chunk also names the role, as OpenAI's do. */
  private chunk(index: number, delta: Record<string, unknown>, finish: FinishReason | null, logprobs: unknown): void {
    if (!this.toolCalls.has(index)) {
      this.toolCalls.set(index, 0);
      delta = { role: 'assistant', ...delta };
      if (delta.content === undefined) delta.content = delta.tool_calls === undefined ? '' : null;
    }
    const out = chatChunk(this.id ?? completionId(), this.model, this.created || nowSeconds(), delta, finish);
    const choice = (out.choices as Record<string, unknown>[])[0]!;
    choice.index = index;
    if (logprobs !== null) choice.logprobs = logprobs;
    this.push(sseEvent(out));
  }
}
