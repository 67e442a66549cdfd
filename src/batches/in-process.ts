/**
 * A request made inside the gateway and run through the model pipeline as
 * if it had come over HTTP (the same stages: limits, routing, retries,
 * fallbacks, cache, guardrails, logs): a batch's line, or a create-batch
 * request the gateway read and hands on to the provider. The request is a
 * Readable of the body with the headers a client would send; the response
 * is a Writable that keeps status, headers and body (bounded) for the
 * caller, or the client's own response when the answer goes back to it.
 */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable, Writable } from 'node:stream';
import type { Arrival, ModelApi } from '../http/server.js';
import type { Endpoint } from '../shared/endpoint.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import { readRequestIds } from '../tracing/tracer.js';

class InProcessRequest extends Readable {
  readonly rawHeaders: string[];
  readonly httpVersion = '1.1';
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    body: Buffer,
  ) {
    super({ read() {} });
    this.rawHeaders = [];
    for (const name in headers) {
      const v = headers[name];
      if (typeof v === 'string') this.rawHeaders.push(name, v);
    }
    if (body.length > 0) this.push(body);
    this.push(null);
  }
}

/** The answer to an in-process request, as the pipeline wrote it. */
export interface InProcessAnswer {
  status: number;
  headers: OutgoingHttpHeaders;
  /** The body, or null when it was longer than the cap. */
  body: Buffer | null;
}

class CollectingResponse extends Writable {
  statusCode = 200;
  headersSent = false;
  private readonly head: OutgoingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly cap: number) {
    super();
  }

  setHeader(name: string, value: number | string | readonly string[]): this {
    this.head[name.toLowerCase()] = value as OutgoingHttpHeaders[string];
    return this;
  }

  getHeader(name: string): OutgoingHttpHeaders[string] {
    return this.head[name.toLowerCase()];
  }

  writeHead(status: number, headers?: OutgoingHttpHeaders): this {
    this.statusCode = status;
    if (headers !== undefined) for (const name in headers) this.head[name.toLowerCase()] = headers[name];
    this.headersSent = true;
    return this;
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.size += b.length;
    if (this.size <= this.cap) this.chunks.push(b);
    done();
  }

  answer(): InProcessAnswer {
    return { status: this.statusCode, headers: this.head, body: this.size > this.cap ? null : Buffer.concat(this.chunks, this.size) };
  }
}

export interface InProcessCall {
  key: ApiKeyRecord;
  endpoint: Endpoint;
  method: string;
  /** Path after /v1, query included. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function arrive(call: InProcessCall): { req: InProcessRequest; arrival: Arrival } {
  const headers: IncomingHttpHeaders = { ...call.headers, 'content-length': String(call.body.length) };
  delete headers['transfer-encoding'];
  if (call.body.length > 0 && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const pathname = `/v1${call.path.split('?')[0]}`;
  const req = new InProcessRequest(call.method, `/v1${call.path}`, headers, call.body);
  return { req, arrival: { endpoint: call.endpoint, path: call.path, pathname, ids: readRequestIds(headers), startedAt: performance.now(), key: call.key } };
}

/** Runs `call` through the pipeline; resolves to its answer, the body kept up to `cap` bytes. */
export async function runInProcess(models: ModelApi, call: InProcessCall, cap: number): Promise<InProcessAnswer> {
  const { req, arrival } = arrive(call);
  const res = new CollectingResponse(cap);
  await models.handle(req as unknown as IncomingMessage, res as unknown as ServerResponse, arrival);
  if (!res.closed) await new Promise<void>((resolve) => res.once('close', resolve));
  return res.answer();
}

/** Runs `call` through the pipeline with its answer written to the client's `res`. */
export function relayInProcess(models: ModelApi, call: InProcessCall, res: ServerResponse): Promise<void> {
  const { req, arrival } = arrive(call);
  return models.handle(req as unknown as IncomingMessage, res, arrival);
}
