/**
 * Output hooks on a streamed answer (OpenAI's chat.completion.chunk or
 * text_completion events, relayed or translated): the guard holds back the
 * events carrying the last `window` characters of text, and each time that
 * much has accumulated, the checks whose failure more text cannot undo
 * (`decidesOnPrefix`) judge the text so far before it is released. At the
 * end every hook judges the whole text. A denying failure, mid-stream or at
 * the end, ends the stream with an error event in the contract's envelope
 * (hook_results beside it) instead of the held text, and never a `[DONE]`;
 * otherwise one last chunk, `choices: []` with `hook_results`, comes before
 * the usage chunk and `[DONE]` (usage stays last, where it is read).
 *
 * Checks that need the end of the text (endsWith, minimum counts, JSON,
 * notNull, …) only run at the end: on a prefix they would fail an answer
 * that is still on its way. A window of 0 holds nothing back: every check
 * runs at the end only, on text the client already has.
 *
 * Each judgment reads the whole text so far, so judging every `window`
 * characters would cost a stream of n characters n²/window (a 1 MB answer at
 * the default 100: 5 GB of text read, on the request thread). Past
 * PREFIX_GROWTH windows the guard waits for the text to grow by
 * 1/PREFIX_GROWTH before it judges again, which keeps the text read to about
 * (PREFIX_GROWTH + 1)·n; held events that added no text are released
 * unjudged (the verdict on the same text cannot change). The text kept is
 * bounded by `maxChars`: a longer stream ends with `tooLong`; one with an
 * event longer than the SSE reader reads (providers/shared/sse.ts), with a
 * 502 bad_upstream_stream.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { SSE_DONE, sseEvent } from '../providers/shared/openai-answer.js';
import { EVENT_TOO_LONG, SseReader, TOO_LONG_EVENT, type SseEvent } from '../providers/shared/sse.js';
import type { GatewayError } from '../shared/errors.js';
import { runHooks, type HookInput, type HookRun } from './engine.js';
import type { HookResults } from './results.js';
import type { Hook, ReadyCheck } from './hooks.js';

export interface StreamGuardOptions {
  hooks: readonly Hook[];
  /** Characters of text held back before they are judged and released. */
  window: number;
  /** What the hooks judge, but the answer, which the guard builds from the stream. */
  input: Omit<HookInput, 'answer'>;
  /** The error a denying hook ends the stream with. */
  denied: GatewayError;
  /** Characters of text kept to judge; a stream with more ends with `tooLong` (and `failed` is told). */
  maxChars: number;
  tooLong: GatewayError;
  /** Told of the error a stream ends with that is not a hook's: tooLong, or an event too long to read. */
  failed(error: GatewayError): void;
  /** The run whose results are the stream's (a denying one, or the one at the end), once: the hook_results its event carries. */
  judged(run: HookRun): HookResults;
}

type Json = Record<string, unknown>;

/** Choices kept apart (OpenAI's largest `n`); text of a choice past them is not judged. */
const MAX_CHOICES = 128;
/** Held events carrying no text (tool-call deltas) are judged and released at this size, so holding stays bounded. */
const MAX_HELD_BYTES = 64 * 1024;
/** Past this many windows of text, the guard judges again when the text has grown by this share of itself. */
const PREFIX_GROWTH = 8;
/**
 * Held events that carry new text are judged once they hold an eighth of the bytes so far (at least
 * MAX_HELD_BYTES, at most this): at a fixed 64 KB, a stream of small deltas (a few characters in ~170 bytes)
 * would have its whole text judged every 1.5 k characters.
 */
const MAX_HELD_TEXT_BYTES = 4 * 1024 * 1024;

export class StreamGuard extends Transform {
  private readonly reader = new SseReader();
  /** Events not yet released, and the characters of text they carry. */
  private held: string[] = [];
  private heldChars = 0;
  private heldBytes = 0;
  /** Bytes of every event read so far. */
  private totalBytes = 0;
  /** The usage chunk and [DONE]: released last, after the results. */
  private readonly tail: string[] = [];
  /** Text so far, per choice index, and its length over every choice. */
  private readonly texts: string[] = [];
  private textChars = 0;
  /** textChars when the text was last judged. */
  private judgedChars = 0;
  private readonly midStream: readonly Hook[];
  /** Characters held back: none when every hook is async (they never hold the answer). */
  private readonly window: number;
  private over = false;
  /** id, object, created and model of the stream's chunks, for the results chunk. */
  private meta: Json = { object: 'chat.completion.chunk' };

  constructor(private readonly o: StreamGuardOptions) {
    super();
    this.window = o.hooks.every((h) => h.async) ? 0 : o.window;
    this.midStream = this.window === 0 ? [] : prefixHooks(o.hooks);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.over) return done();
    this.handle(this.reader.push(chunk)).then(() => done(), done);
  }

  override _flush(done: TransformCallback): void {
    if (this.over) return done();
    this.handle(this.reader.end())
      .then(async () => {
        if (this.over) return;
        const run = await runHooks(this.o.hooks, { ...this.o.input, answer: this.answer() });
        if (run.denied) return this.deny(run);
        const results = this.o.judged(run);
        this.release();
        if (run.results.length > 0) this.push(sseEvent({ ...this.meta, choices: [], hook_results: results }));
        for (const e of this.tail) this.push(e);
      })
      .then(() => done(), done);
  }

  private async handle(events: SseEvent[]): Promise<void> {
    for (const e of events) {
      if (this.over) return;
      if (e.data === TOO_LONG_EVENT && this.reader.tooLong) {
        // The reader reads no further: the stream ends as a translated one does on an event it cannot read.
        this.o.failed(EVENT_TOO_LONG);
        return this.endWith(EVENT_TOO_LONG);
      }
      const raw = reframe(e);
      if (e.data === '[DONE]') {
        this.tail.push(SSE_DONE);
        continue;
      }
      const chunk = parse(e.data);
      if (chunk !== null && Array.isArray(chunk.choices) && chunk.choices.length === 0 && typeof chunk.usage === 'object' && chunk.usage !== null) {
        this.tail.push(raw);
        continue;
      }
      if (chunk !== null && this.meta.id === undefined) this.meta = { id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model };
      this.held.push(raw);
      const added = chunk === null ? 0 : this.add(chunk);
      this.heldChars += added;
      this.textChars += added;
      this.heldBytes += raw.length;
      this.totalBytes += raw.length;
      if (this.textChars > this.o.maxChars) {
        this.o.failed(this.o.tooLong);
        return this.endWith(this.o.tooLong);
      }
      if (this.window === 0) this.release();
      else if (this.heldChars >= Math.max(this.window, this.textChars / PREFIX_GROWTH) || this.heldBytes >= this.heldBytesBound()) await this.judgeSoFar();
    }
  }

  /** The text a chunk adds to its choices; its length. */
  private add(chunk: Json): number {
    if (!Array.isArray(chunk.choices)) return 0;
    let n = 0;
    for (const c of chunk.choices as Json[]) {
      if (typeof c !== 'object' || c === null) continue;
      const piece = this.o.input.endpoint === 'completions' ? c.text : (c.delta as Json | undefined)?.content;
      if (typeof piece !== 'string') continue;
      const i = typeof c.index === 'number' ? c.index : 0;
      if (!Number.isInteger(i) || i < 0 || i >= MAX_CHOICES) continue;
      this.texts[i] = (this.texts[i] ?? '') + piece;
      n += piece.length;
    }
    return n;
  }

  /** Held events with no new text go unjudged at MAX_HELD_BYTES; with new text, at an eighth of the bytes so far. */
  private heldBytesBound(): number {
    if (this.textChars === this.judgedChars) return MAX_HELD_BYTES;
    return Math.min(MAX_HELD_TEXT_BYTES, Math.max(MAX_HELD_BYTES, this.totalBytes / PREFIX_GROWTH));
  }

  private async judgeSoFar(): Promise<void> {
    if (this.midStream.length > 0 && this.textChars > this.judgedChars) {
      this.judgedChars = this.textChars;
      const run = await runHooks(this.midStream, { ...this.o.input, answer: this.answer() });
      if (run.denied) return this.deny(run);
    }
    this.release();
  }

  /** A hook denied: its error event ends the stream instead of the held text. */
  private deny(run: HookRun): void {
    const results = this.o.judged(run);
    this.endWith(this.o.denied, { hook_results: results });
  }

  /** The stream ends with `error`'s event instead of the held text, and no [DONE] follows. */
  private endWith(error: GatewayError, extra: Json = {}): void {
    this.over = true;
    this.held = [];
    this.texts.length = 0;
    this.push(sseEvent({ ...error.toJSON(), ...extra }));
    this.push(null);
    // As a translated stream's error ends: the provider's body is let go once the client has read the event.
    this.once('end', () => this.destroy());
  }

  private release(): void {
    for (const e of this.held) this.push(e);
    this.held = [];
    this.heldChars = 0;
    this.heldBytes = 0;
  }

  /** The answer so far, in the shape after-request hooks judge (text.ts reads its choices). */
  private answer(): Json {
    const chat = this.o.input.endpoint !== 'completions';
    const choices = Array.from(this.texts, (t, index) => (chat ? { index, message: { role: 'assistant', content: t ?? '' } } : { index, text: t ?? '' }));
    return { object: chat ? 'chat.completion' : 'text_completion', choices };
  }
}

/** The event as it is framed on the wire again (data lines, its name; comments and ids dropped). */
function reframe(e: SseEvent): string {
  const name = e.event === undefined ? '' : `event: ${e.event}\n`;
  return `${name}data: ${e.data.replaceAll('\n', '\ndata: ')}\n\n`;
}

function parse(data: string): Json | null {
  try {
    const v = JSON.parse(data) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

/** Each waited-for hook with only its checks that may judge a prefix; hooks left without any are dropped. */
function prefixHooks(hooks: readonly Hook[]): Hook[] {
  return hooks.flatMap((h) => {
    if (h.async) return [];
    const checks = h.checks.filter(decidesOnPrefix);
    return checks.length === 0 ? [] : [{ ...h, checks }];
  });
}

/**
 * Whether a check that fails on the text so far fails on any longer text:
 * then it may end a stream before its end. A forbidden word or pattern found
 * stays found; a maximum count passed stays passed; a letter of the wrong
 * case stays there. (A `$`-anchored pattern that must not match is the
 * exception the rule lets through: it may match a prefix only.)
 */
export function decidesOnPrefix(c: ReadyCheck): boolean {
  const p = c.parameters as Json;
  switch (c.id) {
    case 'default.contains': {
      const op = (p.operator as string | undefined) ?? 'any';
      return c.not ? op !== 'none' : op === 'none';
    }
    case 'default.regexMatch':
      return c.not;
    case 'default.wordCount':
    case 'default.sentenceCount':
    case 'default.characterCount':
      return !c.not && (p as { min?: number }).min === 0;
    case 'default.alluppercase':
    case 'default.alllowercase':
      return !c.not;
    default:
      return false;
  }
}
