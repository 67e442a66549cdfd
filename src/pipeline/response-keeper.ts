/**
 * Keep-response: the step of the answer's stages that stores a Response the
 * gateway made (POST /responses served over a provider's chat API, `store`
 * not false: responses.ts) with its turn's input items, in the workspace of
 * the key that asked. A natively answered response is the provider's to
 * store; a cache hit was stored when first answered.
 *
 * A whole answer is stored before it is written, so a retrieve right after
 * finds it. A stream is read as it passes (the Responses events rebuilt into
 * the Response, as OpenAI's SDK does) and stored before its last byte goes
 * out; a stream cut short — the client left, the provider broke off — is
 * stored as far as it came, `incomplete`, and one that ended in an error
 * event as `failed` with the error's message (spec, Errors rule 3).
 * What is stored is bounded (MAX_STORED_BYTES): past it, the output is not
 * kept and the stored response says so.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { SseReader } from '../providers/shared/sse.js';
import { through } from '../shared/through.js';
import type { ResponseRepo } from '../store/responses.js';
import type { Outcome, RequestContext, ResponseTurn, Stage } from './context.js';
import { MAX_STORED_BYTES } from './responses.js';

type Json = Record<string, unknown>;
/** Stores a Response; resolves once stored, or after SAVE_WAIT_MS, whichever is first; never rejects (errors go to onError). */
type Save = (response: Json) => Promise<void>;

/**
 * How long an answer waits for its Response to be stored, so that a
 * retrieve right after it finds it; past this (a database that stalls) the
 * answer goes on and the write finishes behind it.
 */
const SAVE_WAIT_MS = 2000;

function atMost(write: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([write, late]).finally(() => clearTimeout(timer));
}

export function keepResponse(repo: ResponseRepo, onError: (err: unknown) => void): Stage {
  return {
    name: 'keep-response',
    run(ctx) {
      const turn = ctx.responseTurn;
      const a = ctx.answer!;
      if (turn === null || ctx.served !== null || ctx.result?.answer === undefined || (a.status !== 200 && a.status !== 246)) return 'next';
      const save: Save = (response) => atMost(repo.save(stored(ctx, turn, response)).catch(onError), SAVE_WAIT_MS);
      if (typeof a.body === 'string') return whole(a.body, save);
      a.body = through(a.body, new ResponseKeeper(save));
      return 'next';
    },
  };
}

function stored(ctx: RequestContext, turn: ResponseTurn, response: Json) {
  const { hook_results: _, ...kept } = response;
  return {
    id: String(response.id),
    workspaceId: ctx.key.workspaceId,
    previousResponseId: typeof response.previous_response_id === 'string' ? response.previous_response_id : null,
    status: String(response.status),
    response: JSON.stringify(kept),
    input: JSON.stringify(turn.input),
    createdAt: typeof response.created_at === 'number' ? response.created_at : Math.floor(Date.now() / 1000),
  };
}

async function whole(text: string, save: Save): Promise<Outcome> {
  let response: Json;
  try {
    response = JSON.parse(text) as Json;
  } catch {
    return 'next'; // not a Response: nothing to keep
  }
  await save(text.length > MAX_STORED_BYTES ? tooLarge(response) : response);
  return 'next';
}

/** A Response whose output is past what the store keeps: kept without it, failed, saying why. */
function tooLarge(response: Json): Json {
  return { ...response, output: [], status: 'failed', error: { code: 'stored_output_too_large', message: `the output is larger than the ${MAX_STORED_BYTES} bytes the gateway stores` } };
}

/** The Responses event stream passed on byte for byte, rebuilt into its Response, stored at its end however it ends. */
export class ResponseKeeper extends Transform {
  private readonly reader = new SseReader();
  private response: Json | null = null;
  private ended = false;
  private bytes = 0;
  private stored = false;

  constructor(private readonly save: Save) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes <= MAX_STORED_BYTES) for (const e of this.reader.push(chunk)) this.apply(e.data);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    for (const e of this.reader.end()) this.apply(e.data);
    // Stored before the stream's end reaches the client: a retrieve after it finds the response.
    const kept = this.keep();
    if (kept === null) done();
    else void kept.then(() => done());
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    void this.keep(); // cut short: what came is stored; the stream does not wait
    done(error);
  }

  /** The Response as far as it came; null when there is nothing (or nothing more) to store. */
  private keep(): Promise<void> | null {
    if (this.stored || this.response === null) return null;
    this.stored = true;
    let r = this.response;
    if (this.bytes > MAX_STORED_BYTES) r = tooLarge(r);
    else if (!this.ended) r = { ...r, status: 'incomplete', incomplete_details: { reason: 'interrupted' } };
    return this.save(r);
  }

  /** One event, applied to the Response being rebuilt. */
  private apply(data: string): void {
    if (data === '' || data === '[DONE]' || this.ended) return;
    let e: Json;
    try {
      e = JSON.parse(data) as Json;
    } catch {
      return;
    }
    const type = e.type;
    if (type === 'response.created') {
      this.response = structuredClone(e.response as Json);
      return;
    }
    const r = this.response;
    if (r === null) return;
    const output = r.output as Json[];
    const item = typeof e.output_index === 'number' ? output[e.output_index] : undefined;
    const part = item !== undefined && typeof e.content_index === 'number' ? (item.content as Json[] | undefined)?.[e.content_index] : undefined;
    switch (type) {
      case 'response.output_item.added':
      case 'response.output_item.done':
        output[e.output_index as number] = structuredClone(e.item as Json);
        break;
      case 'response.content_part.added':
        if (item !== undefined) ((item.content ??= []) as Json[])[e.content_index as number] = structuredClone(e.part as Json);
        break;
      case 'response.output_text.delta':
        if (part !== undefined) part.text = String(part.text ?? '') + String(e.delta);
        break;
      case 'response.refusal.delta':
        if (part !== undefined) part.refusal = String(part.refusal ?? '') + String(e.delta);
        break;
      case 'response.function_call_arguments.delta':
        if (item !== undefined) item.arguments = String(item.arguments ?? '') + String(e.delta);
        break;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        this.response = e.response as Json;
        this.ended = true;
        break;
      case 'error':
        this.response = { ...r, status: 'failed', error: { code: e.code ?? 'upstream_error', message: String(e.message ?? 'the stream ended in an error') } };
        this.ended = true;
        break;
    }
  }
}
