// A mock of Google's model APIs on loopback, for the google and vertex-ai adapters' tests.
// One server answers both hosts' paths and an OAuth token endpoint:
//   /v1beta/models/{model}:{generateContent|streamGenerateContent|embedContent|batchEmbedContents}
//       Gemini API, `x-goog-api-key` (or ?key=)
//   /v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}
//       Vertex AI, `Authorization: Bearer <token this mock issued>`; methods as above plus `predict`;
//       publisher `anthropic`: `rawPredict` / `streamRawPredict` with Anthropic's Messages body
//       (anthropic_version "vertex-2023-10-16", no model), answered in Anthropic's shapes and named SSE events
//   /v1/projects/{project}/locations/{location}/endpoints/openapi/chat/completions
//       Vertex AI's OpenAI-compatible endpoint for open models: OpenAI's chat body with the model as
//       `{publisher}/{model}`, answered as OpenAI answers (`data: {…}\n\n` events, then `data: [DONE]`)
//   /v1/projects/{project}/locations/{location}/tuningJobs…
//       Vertex AI's supervised tuning jobs, Bearer token as above (mock-vertex-tuning.ts)
//   /token   Google's OAuth 2 token endpoint for service accounts (JWT bearer grant)
// It checks what Google checks (keys, tokens, the JWT's RS256 signature and claims, the
// project and location, unknown JSON fields, roles, alternating turns, function response
// counts, Gemini 3's thought signatures) and answers in Google's own shapes: google.rpc.Status
// errors, `data: {…}\r\n\r\n` SSE events, OAuth's {error, error_description}.
import type http from 'node:http';
import { after, afterEach, before } from 'node:test';
import { createHash, createVerify, randomBytes, type KeyObject } from 'node:crypto';
import { toEvents } from './mock-anthropic.js';
import { chatCompletion } from './mock-openai.js';
import { countWords, pause, startMockServer, type RecordedRequest } from './mock-server.js';
import { vertexTuning, type VertexTuning } from './mock-vertex-tuning.js';

export type Recorded = RecordedRequest;

export interface TokenExchange {
  /** The assertion's claims and header, once decoded (absent if it did not decode). */
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
  /** The token issued, or the OAuth error answered. */
  issued?: string;
  error?: string;
}

export interface Reply {
  status?: number;
  /** Object → JSON; string sent as it is. */
  body?: unknown;
  /** Events for a streamed answer, each sent as `data: <json>\r\n\r\n`. */
  sse?: unknown[];
  chunkDelayMs?: number;
  headers?: Record<string, string>;
}

export interface MockGemini {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  /** Gemini API base: origin + /v1beta */
  readonly geminiBase: string;
  /** Vertex AI base: origin + /v1 */
  readonly vertexBase: string;
  /** The OAuth token endpoint, for service accounts' token_uri. */
  readonly tokenUri: string;
  /** Model calls (Gemini and Vertex), in arrival order; token requests are in `exchanges`. */
  readonly requests: Recorded[];
  readonly exchanges: TokenExchange[];
  /** A service account the token endpoint knows, by its e-mail and public key. */
  addAccount(email: string, publicKey: KeyObject): void;
  /** Access tokens Vertex accepts without an exchange (as from `gcloud auth print-access-token`). */
  addStaticToken(token: string): void;
  /** expires_in of the tokens issued next (default 3599). */
  tokenLifetimeS: number;
  /** Wait before answering a token request (to overlap concurrent exchanges). */
  tokenDelayMs: number;
  /**
   * Replies for a method (generateContent, streamGenerateContent, batchEmbedContents, embedContent, predict,
   * rawPredict, streamRawPredict, openapi (the OpenAI-compatible endpoint), token), after the checks pass. streamRawPredict's `sse` events are sent
   * as Anthropic names them: `event: <type>\ndata: <json>\n\n`.
   */
  enqueue(method: string, ...replies: Reply[]): void;
  /** The tuning jobs, and moves of their states. */
  readonly tuning: VertexTuning;
  reset(): void;
  close(): Promise<void>;
}

export interface MockGeminiOptions {
  apiKey?: string;
  /** The Vertex project and location every path must name. */
  project?: string;
  location?: string;
}

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Publishers of the open models Vertex serves through its OpenAI-compatible endpoint. */
const OPEN_MODEL_PUBLISHERS = new Set(['meta', 'deepseek-ai', 'qwen', 'openai', 'zai-org']);
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const DEFAULT_DIMS = 8;
const CLAUDE_FIELDS = new Set([
  'anthropic_version', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k',
  'tools', 'tool_choice', 'thinking', 'metadata', 'output_config',
]);

const REQUEST_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent', 'labels']);
const GENERATION_FIELDS = new Set([
  'stopSequences', 'responseMimeType', 'responseSchema', 'candidateCount', 'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed',
  'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'responseModalities', 'mediaResolution',
]);
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const PART_FIELDS = new Set([...PART_DATA, 'thought', 'thoughtSignature']);
const TOOL_FIELDS = new Set(['functionDeclarations', 'googleSearch', 'codeExecution', 'urlContext', 'googleSearchRetrieval']);
const SCHEMA_TYPES = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT']);
const SCHEMA_FIELDS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'items', 'minItems', 'maxItems', 'properties', 'propertyOrdering',
  'required', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'anyOf', 'default', 'example',
]);

/**
 * A mock for the tests of a file or describe block: started before them (accepting `staticToken`
 * as an access token), reset after each, closed after all. The returned function gives it.
 */
export function useMockGemini(opts: MockGeminiOptions & { staticToken?: string }): () => MockGemini {
  let mock: MockGemini | undefined;
  before(async () => {
    mock = await startMockGemini(opts);
    if (opts.staticToken !== undefined) mock.addStaticToken(opts.staticToken);
  });
  afterEach(() => mock?.reset());
  after(() => mock?.close());
  return () => mock!;
}

export async function startMockGemini(opts: MockGeminiOptions = {}): Promise<MockGemini> {
  /** Model calls only: the shared server's list also holds the token requests. */
  const requests: Recorded[] = [];
  const exchanges: TokenExchange[] = [];
  const accounts = new Map<string, KeyObject>();
  const tokens = new Map<string, number>(); // token → expiry (ms)
  const staticTokens = new Set<string>();

  const state = { tokenLifetimeS: 3599, tokenDelayMs: 0 };
  const tuning = vertexTuning();

  // Every non-empty body is parsed (the token endpoint's form, or a bad body, is left undefined and answered below).
  const server = await startMockServer<Reply>(
    async (rec, req, res, signal) => {
      try {
        await handle(rec, req, res, signal);
      } catch (err: unknown) {
        if (!res.headersSent) json(res, 500, status(500, `mock failure: ${String(err)}`, 'INTERNAL'));
        else res.destroy();
      }
    },
    { json: 'non-empty' },
  );
  const origin = server.url;

  async function handle(rec: Recorded, req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
    const url = new URL(rec.path, 'http://mock');
    if (url.pathname === '/token') return token(rec, res, signal);
    requests.push(rec);

    const tuningJobs = /^\/v1\/(projects\/([^/]+)\/locations\/([^/]+))(\/tuningJobs.*)$/.exec(url.pathname);
    if (tuningJobs !== null) {
      const refused = checkBearer(req.headers.authorization) ?? checkPlace(tuningJobs[2]!, tuningJobs[3]!, `${tuningJobs[1]!}/tuningJobs`);
      if (refused !== null) return json(res, refused.status, refused.body);
      const answer = tuning.handle(tuningJobs[1]!, rec.method, tuningJobs[4]!, url.searchParams, rec.json);
      return json(res, answer.status, answer.body);
    }
    const gemini = /^\/v1beta\/models\/([^/:]+):(\w+)$/.exec(url.pathname);
    const vertex = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):(\w+)$/.exec(url.pathname);
    const openapi = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/endpoints\/openapi\/chat\/completions$/.exec(url.pathname);
    let model: string;
    let method: string;
    if (gemini !== null) {
      const denied = checkKey(req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? undefined);
      if (denied !== null) return json(res, denied.status, denied.body);
      [model, method] = [decodeURIComponent(gemini[1]!), gemini[2]!];
    } else if (vertex !== null) {
      const denied = checkBearer(req.headers.authorization);
      if (denied !== null) return json(res, denied.status, denied.body);
      const [project, location, publisher] = [vertex[1]!, vertex[2]!, vertex[3]!];
      [model, method] = [decodeURIComponent(vertex[4]!), vertex[5]!];
      const resource = `projects/${project}/locations/${location}/publishers/${publisher}/models/${model}`;
      const misplaced = checkPlace(project, location, resource);
      if (misplaced !== null) return json(res, misplaced.status, misplaced.body);
      if (publisher === 'anthropic') return claude(rec, res, model, vertex[5]!, signal);
      if (publisher !== 'google') return json(res, 404, status(404, `Publisher Model \`${resource}\` not found.`, 'NOT_FOUND'));
    } else if (openapi !== null) {
      const denied = checkBearer(req.headers.authorization);
      if (denied !== null) return json(res, denied.status, denied.body);
      const [project, location] = [openapi[1]!, openapi[2]!];
      const misplaced = checkPlace(project, location, `projects/${project}/locations/${location}/endpoints/openapi`);
      if (misplaced !== null) return json(res, misplaced.status, misplaced.body);
      return openModel(rec, res, project, location, signal);
    } else {
      return json(res, 404, status(404, `Method not found: ${url.pathname}`, 'NOT_FOUND'));
    }
    if (!/^application\/json/.test(req.headers['content-type'] ?? '')) {
      return json(res, 400, status(400, 'Invalid JSON payload: Content-Type must be application/json.', 'INVALID_ARGUMENT'));
    }
    if (rec.json === undefined || typeof rec.json !== 'object' || Array.isArray(rec.json)) {
      return json(res, 400, status(400, 'Invalid JSON payload received. Unexpected token.', 'INVALID_ARGUMENT'));
    }
    const isVertex = vertex !== null;
    if (method === 'generateContent' || method === 'streamGenerateContent') {
      const problem = checkGenerate(rec.json, model, isVertex);
      if (problem !== null) return json(res, 400, status(400, problem, 'INVALID_ARGUMENT'));
      const scripted = server.next(method);
      if (method === 'generateContent') return reply(res, scripted ?? { body: generate(rec.json, model) }, signal);
      const events = scripted ?? { sse: streamEvents(rec.json, model) };
      if (url.searchParams.get('alt') !== 'sse' && events.sse !== undefined) {
        // Without alt=sse Google streams one JSON array instead of server-sent events.
        return reply(res, { ...events, sse: undefined, body: events.sse }, signal);
      }
      return reply(res, events, signal);
    }
    if (isVertex && method === 'predict') return reply(res, server.next('predict') ?? predict(rec.json), signal);
    if (!isVertex && (method === 'batchEmbedContents' || method === 'embedContent')) {
      const scripted = server.next(method);
      return reply(res, scripted ?? embedGemini(rec.json, model, method), signal);
    }
    return json(res, 404, status(404, `Method ${method} not found for model ${model}.`, 'NOT_FOUND'));
  }

  function checkPlace(project: string, location: string, resource: string): { status: number; body: unknown } | null {
    if (opts.project !== undefined && project !== opts.project) {
      return { status: 403, body: status(403, `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`, 'PERMISSION_DENIED') };
    }
    if (opts.location !== undefined && location !== opts.location) {
      return { status: 400, body: status(400, `Request location '${location}' does not match the endpoint's location '${opts.location}'.`, 'INVALID_ARGUMENT') };
    }
    return null;
  }

  /** An open model on the OpenAI-compatible endpoint: the body is OpenAI's, its model `{publisher}/{model}`. */
  function openModel(rec: Recorded, res: http.ServerResponse, project: string, location: string, signal: AbortSignal): Promise<void> | void {
    const body = rec.json;
    if (body === undefined || typeof body !== 'object' || Array.isArray(body)) {
      return json(res, 400, status(400, 'Invalid JSON payload received. Unexpected token.', 'INVALID_ARGUMENT'));
    }
    const [publisher, name] = typeof body.model === 'string' ? body.model.split('/') : [];
    if (publisher === undefined || name === undefined || !OPEN_MODEL_PUBLISHERS.has(publisher)) {
      const resource = `projects/${project}/locations/${location}/publishers/${String(publisher)}/models/${String(name)}`;
      return json(res, 404, status(404, `Publisher Model \`${resource}\` not found.`, 'NOT_FOUND'));
    }
    const answer = server.next('openapi') ?? chatCompletion(body, 'mock');
    if (answer.sse === undefined) return reply(res, answer, signal);
    res.writeHead(answer.status ?? 200, { 'content-type': 'text/event-stream; charset=utf-8' });
    for (const ev of [...answer.sse, '[DONE]']) res.write(`data: ${typeof ev === 'string' ? ev : JSON.stringify(ev)}\n\n`);
    res.end();
  }

  /** Claude on Vertex: Vertex passes the body to Anthropic's Messages API, which checks and answers it. */
  function claude(rec: Recorded, res: http.ServerResponse, model: string, method: string, signal: AbortSignal): Promise<void> | void {
    if (method !== 'rawPredict' && method !== 'streamRawPredict') {
      return json(res, 404, status(404, `Method ${method} not found for model ${model}.`, 'NOT_FOUND'));
    }
    const problem = checkClaude(rec.json);
    if (problem !== null) return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: problem } });
    const scripted = server.next(method);
    if (scripted?.sse !== undefined) return sendNamedEvents(res, scripted.sse);
    if (scripted !== undefined) return reply(res, scripted, signal);
    const message = claudeMessage(rec.json, model);
    return rec.json.stream === true ? sendNamedEvents(res, toEvents(message)) : json(res, 200, message);
  }

  function checkKey(key: string | string[] | undefined): { status: number; body: unknown } | null {
    if (opts.apiKey === undefined) return null;
    if (key === undefined) {
      return {
        status: 403,
        body: status(403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", 'PERMISSION_DENIED'),
      };
    }
    if (key !== opts.apiKey) {
      return {
        status: 400,
        body: {
          error: {
            code: 400,
            message: 'API key not valid. Please pass a valid API key.',
            status: 'INVALID_ARGUMENT',
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
          },
        },
      };
    }
    return null;
  }

  function checkBearer(authorization: string | undefined): { status: number; body: unknown } | null {
    const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    if (token === undefined) {
      return {
        status: 401,
        body: status(401, 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'UNAUTHENTICATED'),
      };
    }
    const expiry = tokens.get(token);
    if (!staticTokens.has(token) && (expiry === undefined || expiry <= Date.now())) {
      return {
        status: 401,
        body: status(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'UNAUTHENTICATED'),
      };
    }
    return null;
  }

  /** Google's OAuth 2 token endpoint, JWT bearer grant only. */
  async function token(rec: Recorded, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
    const ex: TokenExchange = {};
    exchanges.push(ex);
    if (state.tokenDelayMs > 0) await pause(state.tokenDelayMs, signal);
    const refuse = (error: string, description: string, code = 400): void => {
      ex.error = error;
      json(res, code, { error, error_description: description });
    };
    const scripted = server.next('token');
    if (scripted !== undefined) return reply(res, scripted, signal);
    if (rec.method !== 'POST' || !/^application\/x-www-form-urlencoded/.test(rec.headers['content-type'] ?? '')) {
      return refuse('invalid_request', 'Invalid request: expected a form-encoded POST.');
    }
    const form = new URLSearchParams(rec.body.toString('utf8'));
    if (form.get('grant_type') !== JWT_BEARER) return refuse('unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return refuse('invalid_grant', 'Invalid JWT: malformed assertion.');
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    } catch {
      return refuse('invalid_grant', 'Invalid JWT: could not decode the header or the claims.');
    }
    ex.header = header;
    ex.claims = claims;
    if (header.alg !== 'RS256') return refuse('invalid_grant', `Invalid JWT: alg ${String(header.alg)} is not RS256.`);
    const key = accounts.get(String(claims.iss));
    if (key === undefined) return refuse('invalid_grant', 'Invalid grant: account not found');
    const verified = createVerify('RSA-SHA256').update(`${parts[0]}.${parts[1]}`).verify(key, Buffer.from(parts[2]!, 'base64url'));
    if (!verified) return refuse('invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== `${origin}/token`) return refuse('invalid_grant', `Invalid JWT: aud must be ${origin}/token.`);
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(SCOPE)) return refuse('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const now = Math.floor(Date.now() / 1000);
    const { iat, exp } = claims as { iat?: unknown; exp?: unknown };
    if (typeof iat !== 'number' || typeof exp !== 'number' || iat > now + 60 || exp <= now || exp - iat > 3600) {
      return refuse('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
    }
    const issued = `ya29.mock-${exchanges.length}-${randomBytes(8).toString('hex')}`;
    tokens.set(issued, Date.now() + state.tokenLifetimeS * 1000);
    ex.issued = issued;
    json(res, 200, { access_token: issued, expires_in: state.tokenLifetimeS, token_type: 'Bearer' });
  }

  return {
    origin,
    geminiBase: `${origin}/v1beta`,
    vertexBase: `${origin}/v1`,
    tokenUri: `${origin}/token`,
    requests,
    exchanges,
    addAccount: (email, publicKey) => void accounts.set(email, publicKey),
    addStaticToken: (t) => void staticTokens.add(t),
    get tokenLifetimeS() {
      return state.tokenLifetimeS;
    },
    set tokenLifetimeS(s: number) {
      state.tokenLifetimeS = s;
    },
    get tokenDelayMs() {
      return state.tokenDelayMs;
    },
    set tokenDelayMs(ms: number) {
      state.tokenDelayMs = ms;
    },
    // Queues are keyed by method name ('token' for the token endpoint) rather than by path.
    enqueue: (method, ...replies) => server.enqueue(method, ...replies),
    tuning,
    reset() {
      server.reset();
      tuning.reset();
      requests.length = 0;
      exchanges.length = 0;
      state.tokenLifetimeS = 3599;
      state.tokenDelayMs = 0;
    },
    close: server.close,
  };
}

// ---------------------------------------------------------------------------------------
// Request checks, as Google's API frontends make them

function checkGenerate(body: any, model: string, vertex: boolean): string | null {
  const unknown = Object.keys(body).find((k) => !REQUEST_FIELDS.has(k));
  if (unknown !== undefined) return `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`;
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified\n';
  // The current turn began with the last user content that is not only function responses.
  const turnStart = (body.contents as any[]).findLastIndex((c) => c.role === 'user' && (c.parts as any[]).some((p) => p.functionResponse === undefined));
  let previous: string | undefined;
  for (const [i, c] of (body.contents as any[]).entries()) {
    if (c.role !== 'user' && c.role !== 'model') return 'Please use a valid role: user, model.';
    if (vertex && c.role === previous) return 'Please ensure that multiturn requests alternate between user and model.';
    previous = c.role;
    const problem = checkParts(c.parts, `contents[${i}]`, vertex);
    if (problem !== null) return problem;
    const calls = (c.parts as any[]).filter((p) => p.functionCall !== undefined);
    if (c.role === 'model' && calls.length > 0) {
      const next = body.contents[i + 1];
      const responses = next === undefined ? undefined : (next.parts as any[]).filter((p) => p.functionResponse !== undefined).length;
      if (responses !== undefined && responses !== calls.length) {
        return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      }
      // Gemini 3 signs the first function call of each step (parallel calls share it) and wants it
      // back for the steps of the current turn.
      if (/^gemini-3/.test(model) && i > turnStart && typeof calls[0].thoughtSignature !== 'string') {
        return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${calls[0].functionCall.name}\` , position 1. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
      }
    }
  }
  if (body.systemInstruction !== undefined) {
    const problem = checkParts(body.systemInstruction.parts, 'systemInstruction', vertex);
    if (problem !== null) return problem;
  }
  const g = body.generationConfig;
  if (g !== undefined) {
    const bad = Object.keys(g).find((k) => !GENERATION_FIELDS.has(k));
    if (bad !== undefined) return `Invalid JSON payload received. Unknown name "${bad}" at 'generation_config': Cannot find field.`;
    if (g.responseSchema !== undefined) {
      const problem = checkSchema(g.responseSchema, 'generation_config.response_schema');
      if (problem !== null) return problem;
    }
  }
  for (const [i, t] of ((body.tools ?? []) as any[]).entries()) {
    const bad = Object.keys(t).find((k) => !TOOL_FIELDS.has(k));
    if (bad !== undefined) return `Invalid JSON payload received. Unknown name "${bad}" at 'tools[${i}]': Cannot find field.`;
    for (const [j, d] of ((t.functionDeclarations ?? []) as any[]).entries()) {
      const at = `tools[${i}].function_declarations[${j}]`;
      if (typeof d.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/.test(d.name)) return `* GenerateContentRequest.${at}.name: Invalid function name.`;
      const extra = Object.keys(d).find((k) => !['name', 'description', 'parameters'].includes(k));
      if (extra !== undefined) return `Invalid JSON payload received. Unknown name "${extra}" at '${at}': Cannot find field.`;
      if (d.parameters !== undefined) {
        if (d.parameters.type === 'OBJECT' && Object.keys(d.parameters.properties ?? {}).length === 0) {
          return `* GenerateContentRequest.${at}.parameters.properties: should be non-empty for OBJECT type\n`;
        }
        const problem = checkSchema(d.parameters, `${at}.parameters`);
        if (problem !== null) return problem;
      }
    }
  }
  const fc = body.toolConfig?.functionCallingConfig;
  if (fc !== undefined) {
    if (!['AUTO', 'ANY', 'NONE'].includes(fc.mode)) return `Invalid value at 'tool_config.function_calling_config.mode' (${String(fc.mode)})`;
    if (fc.allowedFunctionNames !== undefined && fc.mode !== 'ANY') {
      return '* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: allowed_function_names should only be set when the Mode is ANY.\n';
    }
  }
  return null;
}

function checkParts(parts: unknown, at: string, vertex: boolean): string | null {
  if (!Array.isArray(parts) || parts.length === 0) return `* GenerateContentRequest.${at}.parts: contents.parts must not be empty.\n`;
  for (const [j, p] of (parts as any[]).entries()) {
    const bad = Object.keys(p).find((k) => !PART_FIELDS.has(k));
    if (bad !== undefined) return `Invalid JSON payload received. Unknown name "${bad}" at '${at}.parts[${j}]': Cannot find field.`;
    const data = PART_DATA.filter((k) => p[k] !== undefined);
    if (data.length !== 1) return `* GenerateContentRequest.${at}.parts[${j}].data: required oneof field 'data' must have one initialized field\n`;
    if (p.text === '') return 'Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.';
    if (p.inlineData !== undefined && (typeof p.inlineData.mimeType !== 'string' || typeof p.inlineData.data !== 'string')) {
      return `* GenerateContentRequest.${at}.parts[${j}].inline_data: mime_type and data are required\n`;
    }
    if (p.fileData !== undefined && (typeof p.fileData.fileUri !== 'string' || (vertex && typeof p.fileData.mimeType !== 'string'))) {
      return `* GenerateContentRequest.${at}.parts[${j}].file_data: file_uri and mime_type are required\n`;
    }
    const call = p.functionCall;
    // Vertex v1's FunctionCall has only name and args.
    const callFields = vertex ? ['name', 'args'] : ['name', 'args', 'id'];
    const badCall = call === undefined ? undefined : Object.keys(call).find((k) => !callFields.includes(k));
    if (badCall !== undefined) return `Invalid JSON payload received. Unknown name "${badCall}" at '${at}.parts[${j}].function_call': Cannot find field.`;
    const response = p.functionResponse;
    if (response !== undefined && (typeof response.name !== 'string' || typeof response.response !== 'object' || Array.isArray(response.response))) {
      return `* GenerateContentRequest.${at}.parts[${j}].function_response: name and a response object are required\n`;
    }
  }
  return null;
}

function checkSchema(s: any, at: string): string | null {
  const bad = Object.keys(s).find((k) => !SCHEMA_FIELDS.has(k));
  if (bad !== undefined) return `Invalid JSON payload received. Unknown name "${bad}" at '${at}': Cannot find field.`;
  if (s.type !== undefined && !SCHEMA_TYPES.has(s.type)) return `Invalid value at '${at}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "${String(s.type)}"`;
  if (s.type === 'STRING' && s.format !== undefined && !['enum', 'date-time'].includes(s.format)) {
    return `* GenerateContentRequest.${at}.format: only 'enum' and 'date-time' are supported for STRING type\n`;
  }
  for (const [name, sub] of Object.entries(s.properties ?? {})) {
    const problem = checkSchema(sub, `${at}.properties[${name}]`);
    if (problem !== null) return problem;
  }
  if (s.items !== undefined) return checkSchema(s.items, `${at}.items`);
  for (const [i, sub] of ((s.anyOf ?? []) as any[]).entries()) {
    const problem = checkSchema(sub, `${at}.any_of[${i}]`);
    if (problem !== null) return problem;
  }
  return null;
}

/** The Messages API's checks a translation can fail, on Vertex's body (https://docs.anthropic.com/en/api/claude-on-vertex-ai). */
function checkClaude(b: any): string | null {
  if (b === undefined || typeof b !== 'object' || Array.isArray(b)) return 'There was an issue with the formatting or content of your request body';
  if (b.anthropic_version === undefined) return 'anthropic_version: Field required';
  if (b.anthropic_version !== 'vertex-2023-10-16') return `anthropic_version: invalid version '${String(b.anthropic_version)}'`;
  // Vertex's schema has no model field: the URL names the model.
  const extra = Object.keys(b).find((k) => !CLAUDE_FIELDS.has(k));
  if (extra !== undefined) return `${extra}: Extra inputs are not permitted`;
  if (!Number.isInteger(b.max_tokens) || b.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages: Field required';
  if (b.temperature !== undefined && (typeof b.temperature !== 'number' || b.temperature < 0 || b.temperature > 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }
  let toolUses: string[] = [];
  for (const [i, m] of (b.messages as any[]).entries()) {
    if (m?.role !== 'user' && m?.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const blocks: any[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    const results = blocks.filter((x) => x.type === 'tool_result').map((x) => x.tool_use_id);
    const missing = toolUses.filter((id) => !results.includes(id));
    if (missing.length > 0) return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`;
    toolUses = m.role === 'assistant' ? blocks.filter((x) => x.type === 'tool_use').map((x) => x.id) : [];
  }
  for (const [i, t] of ((b.tools ?? []) as any[]).entries()) {
    if (t.type === undefined && (typeof t.name !== 'string' || typeof t.input_schema !== 'object')) return `tools.${i}.input_schema: Field required`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Default answers

/** Claude's echo of the last user text, as a whole Messages answer. */
function claudeMessage(body: any, model: string): Record<string, unknown> {
  const last = (body.messages as any[]).findLast((m) => m.role === 'user');
  const blocks: any[] = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : last?.content ?? [];
  const text = `[mock] echo: ${blocks.filter((x) => x.type === 'text').map((x) => x.text).join(' ')}`;
  return {
    id: `msg_vrtx_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: countWords(JSON.stringify(body.messages)), output_tokens: countWords(text) },
  };
}

function lastUserText(body: any): string {
  const users = (body.contents as any[]).filter((c) => c.role === 'user');
  const parts = (users.at(-1)?.parts ?? []) as any[];
  return parts.filter((p) => typeof p.text === 'string').map((p) => p.text).join(' ');
}

function promptTokens(body: any): number {
  let n = 0;
  for (const c of [...body.contents, ...(body.systemInstruction ? [body.systemInstruction] : [])]) {
    for (const p of c.parts) if (typeof p.text === 'string') n += countWords(p.text);
  }
  return n;
}

function answerText(body: any): string {
  const said = lastUserText(body);
  return body.generationConfig?.responseMimeType === 'application/json' ? JSON.stringify({ echo: said }) : `[mock] echo: ${said}`;
}

function generate(body: any, model: string): unknown {
  const text = answerText(body);
  const n = body.generationConfig?.candidateCount ?? 1;
  const prompt = promptTokens(body);
  const candidates = Array.from({ length: n }, (_, index) => ({
    content: { role: 'model', parts: [{ text }] },
    finishReason: 'STOP',
    index,
  }));
  const completion = countWords(text) * n;
  return {
    candidates,
    usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: completion, totalTokenCount: prompt + completion },
    modelVersion: model,
    responseId: randomBytes(9).toString('base64url'),
  };
}

function streamEvents(body: any, model: string): unknown[] {
  const text = answerText(body);
  const pieces = text.split(/(?=\s)/).filter((s) => s.length > 0);
  const prompt = promptTokens(body);
  const responseId = randomBytes(9).toString('base64url');
  return pieces.map((piece, i) => {
    const last = i === pieces.length - 1;
    return {
      candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
      usageMetadata: last
        ? { promptTokenCount: prompt, candidatesTokenCount: countWords(text), totalTokenCount: prompt + countWords(text) }
        : { promptTokenCount: prompt },
      modelVersion: model,
      responseId,
    };
  });
}

function embedGemini(body: any, model: string, method: string): Reply {
  const requests: any[] = method === 'embedContent' ? [{ ...body, model: `models/${model}` }] : body.requests;
  if (!Array.isArray(requests) || requests.length === 0) return { status: 400, body: status(400, '* BatchEmbedContentsRequest.requests: must not be empty\n', 'INVALID_ARGUMENT') };
  for (const [i, r] of requests.entries()) {
    if (r.model !== `models/${model}`) {
      return { status: 400, body: status(400, `* BatchEmbedContentsRequest.requests[${i}].model: the model of every request must be models/${model}\n`, 'INVALID_ARGUMENT') };
    }
  }
  const vectors = requests.map((r) => vector(r.content.parts.map((p: any) => p.text).join(' '), r.outputDimensionality ?? DEFAULT_DIMS));
  return { body: method === 'embedContent' ? { embedding: { values: vectors[0] } } : { embeddings: vectors.map((values) => ({ values })) } };
}

function predict(body: any): Reply {
  if (!Array.isArray(body?.instances) || body.instances.length === 0) {
    return { status: 400, body: status(400, 'Invalid JSON payload: instances must be a non-empty list.', 'INVALID_ARGUMENT') };
  }
  const dims = body.parameters?.outputDimensionality ?? DEFAULT_DIMS;
  return {
    body: {
      predictions: (body.instances as any[]).map((inst) => ({
        embeddings: { values: vector(inst.content, dims), statistics: { token_count: countWords(inst.content), truncated: false } },
      })),
      metadata: { billableCharacterCount: (body.instances as any[]).reduce((n, inst) => n + String(inst.content).length, 0) },
    },
  };
}

/** A deterministic unit vector from the text, rounded to float32 so base64 round-trips exactly. */
export function vector(text: string, dims: number): number[] {
  const raw: number[] = [];
  for (let block = 0; raw.length < dims; block++) {
    const h = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i < h.length && raw.length < dims; i += 4) raw.push((h.readUInt32LE(i) / 0xffffffff) * 2 - 1);
  }
  const norm = Math.hypot(...raw) || 1;
  return raw.map((v) => Math.fround(v / norm));
}

// ---------------------------------------------------------------------------------------
// Sending

function status(code: number, message: string, name: string): unknown {
  return { error: { code, message, status: name } };
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function sendNamedEvents(res: http.ServerResponse, events: unknown[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  for (const ev of events) {
    if (res.destroyed) return;
    res.write(`event: ${String((ev as { type?: unknown }).type)}\ndata: ${JSON.stringify(ev)}\n\n`);
  }
  res.end();
}

async function reply(res: http.ServerResponse, r: Reply, signal: AbortSignal): Promise<void> {
  const code = r.status ?? 200;
  if (r.sse !== undefined) {
    res.writeHead(code, { 'content-type': 'text/event-stream', ...r.headers });
    for (const [i, ev] of r.sse.entries()) {
      if (i > 0 && r.chunkDelayMs && !(await pause(r.chunkDelayMs, signal))) return;
      if (res.destroyed) return;
      res.write(`data: ${typeof ev === 'string' ? ev : JSON.stringify(ev)}\r\n\r\n`);
    }
    res.end();
    return;
  }
  const text = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8', ...r.headers });
  res.end(text);
}
