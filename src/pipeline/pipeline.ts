/**
 * The request path of the model endpoints and the generic proxy: one
 * RequestContext through a list of named stages (gateway.ts builds it:
 * admit → plan → body → before-hooks → cache → reserve → route → after-hooks
 * → respond), each of which may answer and end the request; then, however it
 * ended, the record stage. A feature is a stage or a step of one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Arrival, ModelApi } from '../http/server.js';
import { GatewayError } from '../shared/errors.js';
import type { Tracer } from '../tracing/tracer.js';
import { RequestContext, runStages, type Stage } from './context.js';

/** The record stage (record.ts): runs once every request, however it ended. */
export interface RecordStage {
  record(ctx: RequestContext): void;
}

export class Pipeline implements ModelApi {
  constructor(
    private readonly stages: readonly Stage[],
    private readonly recorder: RecordStage,
    private readonly tracer: Tracer,
    private readonly onError: (err: unknown) => void,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void> {
    const span = this.tracer.startRequest(req, arrival.ids, arrival.endpoint, arrival.pathname, arrival.startedAt);
    const ctx = new RequestContext(req, res, arrival, span);
    try {
      const out = runStages(this.stages, ctx);
      if (out instanceof Promise) await out;
    } catch (err) {
      // A bug, not a refusal: the request still gets an answer (or its connection closed) and its record.
      this.onError(err);
      if (res.headersSent) res.destroy();
      else ctx.refuse(new GatewayError(500, 'internal gateway error', { code: 'internal_error' }));
    }
    this.recorder.record(ctx);
  }
}
