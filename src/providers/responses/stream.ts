/**
 * A chat stream (OpenAI chat.completion.chunk events, as every provider's
 * chat translator makes them, or as an OpenAI-compatible provider sends
 * them) as the Responses API's event stream. Each event is
 * `event: <type>` + `data: {type, …, sequence_number}`, in OpenAI's order:
 *
 *   response.created, response.in_progress
 *   per output item: response.output_item.added, then
 *     reasoning: response.reasoning_summary_part.added, response.reasoning_summary_text.delta…,
 *                response.reasoning_summary_text.done, response.reasoning_summary_part.done
 *     message:   response.content_part.added, response.output_text.delta…,
 *                response.output_text.done, response.content_part.done
 *     function:  response.function_call_arguments.delta…, response.function_call_arguments.done
 *   and response.output_item.done
 *   response.completed (or response.incomplete), with the whole Response and its usage.
 *
 * A chat stream that ends in an error event (the provider's error, an
 * unreadable or cut stream: shared/stream.ts) ends this one with an `error`
 * event: OpenAI's fields (code, message, param) beside the contract's
 * `error` envelope, which OpenAI's SDKs raise; never a response.completed.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { SseReader } from '../shared/sse.js';
import type { OpenAIUsage } from '../shared/openai-answer.js';
import { HELD_ENTRY, heldTooMuch, incompleteStream, MAX_HELD_CHARS } from '../shared/stream.js';
import { GatewayError } from '../../shared/errors.js';
import { finished, functionCallItem, messageItem, reasoningItem, responseShell, responseUsage, textPart, type Json } from './answer.js';
import type { ResponsesBody } from './request.js';

interface OpenItem {
  index: number;
  item: Json;
  /** What was streamed into it: text, summary or arguments. */
  text: string;
  done: boolean;
}

interface ChatDelta {
  content?: unknown;
  refusal?: unknown;
  reasoning_content?: unknown;
  tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
}

export class ResponsesStream extends Transform {
  private readonly reader = new SseReader();
  private readonly response: Json;
  private readonly output: Json[];
  private seq = 0;
  private started = false;
  private over = false;
  private reasoning: OpenItem | null = null;
  private message: OpenItem | null = null;
  /** Function calls by their chat index. */
  private readonly calls = new Map<number, OpenItem>();
  private finish: unknown = null;
  private usage: OpenAIUsage | undefined;
  /** The output held for response.completed, in characters (shared/stream.ts MAX_HELD_CHARS). */
  private held = 0;

  /**
   * `chat`: provider bytes → chat SSE (a translator's stream; a pass-through
   * for a provider that speaks OpenAI's chat itself).
   */
  constructor(
    private readonly chat: Transform,
    body: ResponsesBody,
    private readonly provider: string,
  ) {
    super();
    this.response = responseShell(body, String(body.model ?? ''));
    this.output = this.response.output as Json[];
    chat.on('data', (chunk: Buffer | string) => this.fromChat(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    chat.once('error', (e) => this.destroy(e));
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.over) return done();
    // Back-pressure: the chat side is read as it writes (its 'data' handler above).
    this.chat.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    if (this.over) return done();
    this.chat.once('end', () => {
      for (const e of this.reader.end()) this.event(e.data);
      if (!this.over) this.fail(incompleteStream(this.provider, 'before its end'));
      done();
    });
    this.chat.end();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.chat.destroy();
    done(error);
  }

  private fromChat(chunk: Buffer): void {
    for (const e of this.reader.push(chunk)) {
      if (this.over) return;
      this.event(e.data);
    }
  }

  private event(data: string): void {
    if (this.over || data === '') return;
    if (data === '[DONE]') return this.complete();
    let chunk: { model?: unknown; choices?: { delta?: ChatDelta; finish_reason?: unknown }[]; usage?: OpenAIUsage | null; error?: unknown };
    try {
      chunk = JSON.parse(data) as typeof chunk;
    } catch {
      return this.fail(new GatewayError(502, `${this.provider} sent a stream event that is not JSON`, { code: 'bad_upstream_stream' }));
    }
    if (chunk.error !== undefined) return this.fail(errorOf(chunk.error));
    if (!this.started) this.start(chunk.model);
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (choice === undefined) return;
    const d = choice.delta ?? {};
    if (typeof d.reasoning_content === 'string' && d.reasoning_content !== '') this.reason(d.reasoning_content);
    if (typeof d.content === 'string' && d.content !== '') this.text(d.content);
    if (typeof d.refusal === 'string' && d.refusal !== '') this.refuse(d.refusal);
    if (Array.isArray(d.tool_calls)) for (const c of d.tool_calls) this.call(c);
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) this.finish = choice.finish_reason;
  }

  private start(model: unknown): void {
    this.started = true;
    if (typeof model === 'string' && model !== '') this.response.model = model;
    this.send('response.created', { response: { ...this.response, output: [] } });
    this.send('response.in_progress', { response: { ...this.response, output: [] } });
  }

  private send(type: string, fields: Json): void {
    this.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: this.seq++ })}\n\n`);
  }

  private open(item: Json): OpenItem {
    const open = { index: this.output.length, item, text: '', done: false };
    this.output.push(item);
    this.send('response.output_item.added', { output_index: open.index, item });
    return open;
  }

  private reason(delta: string): void {
    if (!this.hold(delta.length)) return;
    if (this.reasoning === null) {
      this.reasoning = this.open(reasoningItem(''));
      this.send('response.reasoning_summary_part.added', { ...this.at(this.reasoning), summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    this.reasoning.text += delta;
    this.send('response.reasoning_summary_text.delta', { ...this.at(this.reasoning), summary_index: 0, delta });
  }

  private closeReasoning(): void {
    const r = this.reasoning;
    if (r === null || r.done) return;
    r.done = true;
    const part = { type: 'summary_text', text: r.text };
    this.send('response.reasoning_summary_text.done', { ...this.at(r), summary_index: 0, text: r.text });
    this.send('response.reasoning_summary_part.done', { ...this.at(r), summary_index: 0, part });
    r.item.summary = [part];
    this.send('response.output_item.done', { output_index: r.index, item: r.item });
  }

  private openMessage(): OpenItem {
    this.closeReasoning();
    if (this.message === null) {
      const m = (this.message = this.open(messageItem('', null, 'in_progress')));
      m.item.content = [];
    }
    return this.message;
  }

  private text(delta: string): void {
    if (!this.hold(delta.length)) return;
    const m = this.openMessage();
    const content = m.item.content as Json[];
    if (content.length === 0) {
      content.push(textPart(''));
      this.send('response.content_part.added', { ...this.at(m), content_index: 0, part: textPart('') });
    }
    m.text += delta;
    (content[0] as Json).text = m.text;
    this.send('response.output_text.delta', { ...this.at(m), content_index: 0, delta, logprobs: [] });
  }

  private refuse(delta: string): void {
    if (!this.hold(delta.length)) return;
    const m = this.openMessage();
    const content = m.item.content as Json[];
    let part = content.find((p) => p.type === 'refusal');
    if (part === undefined) {
      part = { type: 'refusal', refusal: '' };
      content.push(part);
      this.send('response.content_part.added', { ...this.at(m), content_index: content.length - 1, part: { type: 'refusal', refusal: '' } });
    }
    part.refusal = String(part.refusal) + delta;
    this.send('response.refusal.delta', { ...this.at(m), content_index: content.indexOf(part), delta });
  }

  private closeMessage(): void {
    const m = this.message;
    if (m === null || m.done) return;
    m.done = true;
    const content = m.item.content as Json[];
    content.forEach((part, i) => {
      if (part.type === 'output_text') this.send('response.output_text.done', { ...this.at(m), content_index: i, text: part.text, logprobs: [] });
      else this.send('response.refusal.done', { ...this.at(m), content_index: i, refusal: part.refusal });
      this.send('response.content_part.done', { ...this.at(m), content_index: i, part });
    });
    m.item.status = 'completed';
    this.send('response.output_item.done', { output_index: m.index, item: m.item });
  }

  private call(c: NonNullable<ChatDelta['tool_calls']>[number]): void {
    const index = typeof c.index === 'number' ? c.index : 0;
    let open = this.calls.get(index);
    const args = c.function?.arguments;
    const name = c.function?.name;
    const id = String(c.id ?? '');
    const named = open !== undefined && typeof name === 'string' && open.item.name === '';
    // What the output item keeps: its entry, id and name once, and the arguments as they come.
    let kept = typeof args === 'string' ? args.length : 0;
    if (open === undefined) kept += HELD_ENTRY + id.length + String(name ?? '').length;
    else if (named) kept += name.length;
    if (!this.hold(kept)) return;
    if (open === undefined) {
      this.closeReasoning();
      this.closeMessage();
      open = this.open(functionCallItem(id, String(name ?? ''), '', 'in_progress'));
      this.calls.set(index, open);
    } else if (named) {
      open.item.name = name;
    }
    if (typeof args === 'string' && args !== '') {
      open.text += args;
      open.item.arguments = open.text;
      this.send('response.function_call_arguments.delta', { ...this.at(open), delta: args });
    }
  }

  /** Counts `n` more characters of output held; false, the stream ended with an error event, once past MAX_HELD_CHARS. */
  private hold(n: number): boolean {
    if (this.over) return false;
    this.held += n;
    if (this.held <= MAX_HELD_CHARS) return true;
    this.fail(heldTooMuch(this.provider));
    return false;
  }

  private at(open: OpenItem): { item_id: unknown; output_index: number } {
    return { item_id: open.item.id, output_index: open.index };
  }

  /** The chat stream's [DONE]: every open item done, then the whole Response. */
  private complete(): void {
    if (!this.started) this.start(undefined);
    this.closeReasoning();
    if (this.message === null && this.calls.size === 0) this.openMessage();
    this.closeMessage();
    for (const open of this.calls.values()) {
      this.send('response.function_call_arguments.done', { ...this.at(open), name: open.item.name, arguments: open.text });
      open.item.status = 'completed';
      this.send('response.output_item.done', { output_index: open.index, item: open.item });
    }
    finished(this.response, this.finish);
    this.response.usage = responseUsage(this.usage);
    this.send(this.response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.response });
    this.over = true;
  }

  private fail(error: GatewayError): void {
    const e = error.toJSON().error;
    this.send('error', { code: e.code, message: e.message, param: e.param, error: e });
    this.over = true;
    this.push(null);
    this.once('end', () => this.destroy());
  }
}

/** A chat stream's error event (`{"error": {…}}`) as a GatewayError, its status kept where it says one. */
function errorOf(e: unknown): GatewayError {
  const o = (typeof e === 'object' && e !== null ? e : {}) as { message?: unknown; code?: unknown; type?: unknown; param?: unknown };
  return new GatewayError(502, typeof o.message === 'string' ? o.message : 'the provider ended the stream with an error', {
    code: typeof o.code === 'string' ? o.code : 'upstream_error',
    param: typeof o.param === 'string' ? o.param : null,
  });
}
