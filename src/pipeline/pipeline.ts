/**
 * The request path of the model endpoints and the generic proxy: one
 * RequestContext through a list of named stages, each of which may answer
 * and end the request; then, however it ended, the record stage. A feature
 * is a stage or a step of one (the hooks stages take steps).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnswerCache } from '../cache/answer-cache.js';
import type { Arrival, ModelApi } from '../http/server.js';
import type { CredentialSource } from '../routing/credentials.js';
import type { Router } from '../routing/router.js';
import { GatewayError } from '../shared/errors.js';
import type { ResponseRepo } from '../store/responses.js';
import type { Tracer } from '../tracing/tracer.js';
import { admit } from './admit.js';
import { body } from './body.js';
import { cache } from './cache.js';
import { credential } from './credential.js';
import { RequestContext, runStages, type RecordStage, type Stage } from './context.js';
import { hooks } from './hooks.js';
import type { RequestLimits } from './limits.js';
import { plan } from './plan.js';
import { prompt, renderPrompt } from './prompt.js';
import { reserve } from './reserve.js';
import { respond } from './respond.js';
import { keepResponse } from './response-keeper.js';
import { responses } from './responses.js';
import { route } from './route.js';
import type { SavedConfigs } from './saved-configs.js';
import type { SavedPrompts } from './saved-prompts.js';

export interface RequestPathDeps {
  limits: RequestLimits;
  configs: SavedConfigs;
  prompts: SavedPrompts;
  maxBodyBytes: number;
  cache: AnswerCache;
  router: Router;
  /** Stored credentials, for the price of what a target would send. */
  credentials: CredentialSource;
  /** Request logs are on: answers are copied for them as they pass. */
  logging: boolean;
  /** Stored responses (POST /responses with store), and where a failure to store one is told. */
  responses: ResponseRepo;
  onStoreError: (err: unknown) => void;
  /** Steps of the hooks stages, in order. */
  beforeHooks: readonly Stage[];
  afterHooks: readonly Stage[];
}

/**
 * The stages in their order, the one place it is written: each reads what
 * the ones before it put on the context.
 */
export function requestPath(d: RequestPathDeps): readonly Stage[] {
  const answered = [
    hooks('after-hooks', d.afterHooks), // output checks
    keepResponse(d.responses, d.onStoreError), // a Response the gateway made, stored
    respond(d.logging), // headers, body streamed, usage charged, answer kept
  ];
  return [
    admit(d.limits), // x-gateway-* headers, rate limits (before the body is read)
    plan(d.configs), // config → routing plan
    prompt(d.prompts, d.configs), // a prompt run or a config's prompt_id: the prompt, its access, its routing
    credential(d.credentials), // the stored credential a single target names: unknown or not enabled → refused before the body
    body(d.maxBodyBytes, renderPrompt), // read, parse, the prompt rendered into it, validate
    hooks('before-hooks', d.beforeHooks), // guardrails
    responses(d.responses), // previous_response_id chains, truncation
    cache(d.cache, answered), // a hit answers here (through the answer's stages when hooks judge it)
    reserve(d.limits, d.credentials), // budgets reserve the estimate
    route(d.router), // retries, fallbacks, circuits → the answer in OpenAI's shape
    ...answered,
  ];
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
