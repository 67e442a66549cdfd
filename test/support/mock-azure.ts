// A mock of Azure's model APIs on loopback, for the azure-openai and azure-ai adapters'
// tests. One server plays three parts, told apart by path:
//   - an Azure OpenAI resource: /openai/deployments/{id}/{chat/completions|completions|embeddings}?api-version=…,
//     the v1 API /openai/v1/…, and …/images/generations (for the generic proxy);
//   - an AI Foundry endpoint (serverless or managed): /v1/… (OpenAI-compatible routes) and
//     /chat/completions, /completions, /embeddings?api-version=… (the Model Inference API);
//   - the Entra ID token endpoint: POST /{tenant}/oauth2/v2.0/token (tests point AZURE_AUTHORITY_HOST here).
// It checks what Azure checks (api-version, deployment, api-key or a bearer token for the right
// audience, the Model Inference API's parameter rules) and answers with Azure's own shapes:
// OpenAI's bodies plus content-filter fields, and Azure's errors.
import type http from 'node:http';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { countWords, float32Base64, startMockServer, type RecordedRequest } from './mock-server.js';

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface MockAzureOptions {
  /** The Azure OpenAI resource's key (`api-key`) and the Foundry endpoint's key (`Authorization: Bearer`). */
  apiKey: string;
  /** Azure OpenAI deployments: deployment id → the model it runs. */
  deployments?: Record<string, string>;
  /** The Foundry endpoint behind /v1/… and the Model Inference API routes. */
  foundry?: { kind: 'serverless' | 'managed'; model: string; /** Managed endpoints: deployment names, the first taking the traffic. */ deployments?: string[] };
  /** The one app registration the token endpoint knows. */
  entra?: { tenantId: string; clientId: string; clientSecret: string; /** Token lifetime in seconds (default 3599). */ expiresIn?: number };
}

export interface MockAzure {
  /** http://127.0.0.1:<port>, no path: the custom host of both adapters and the authority host. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests that reached the token endpoint. */
  tokenRequests(): RecordedRequest[];
  /** Requests to everything but the token endpoint. */
  apiRequests(): RecordedRequest[];
  /** Queue answers for a path (no query), sent before any check. */
  enqueue(path: string, ...responses: ScriptedResponse[]): void;
  reset(): void;
  close(): Promise<void>;
}

/** api-version values the mock's Azure OpenAI resource serves (GA and preview releases). */
export const AZURE_OPENAI_API_VERSIONS = ['2024-02-01', '2024-06-01', '2024-10-21', '2024-08-01-preview', '2024-10-01-preview', '2024-12-01-preview', '2025-01-01-preview'];
/** api-version of the Azure AI Model Inference API. */
export const MODEL_INFERENCE_API_VERSIONS = ['2024-05-01-preview'];
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';
export const AZURE_ML_SCOPE = 'https://ml.azure.com/.default';

const OPERATIONS = new Set(['chat/completions', 'completions', 'embeddings']);
/** Request fields the Model Inference API defines for chat; others are "extra parameters". */
const INFERENCE_CHAT_FIELDS = new Set([
  'messages', 'model', 'frequency_penalty', 'max_tokens', 'presence_penalty', 'response_format', 'seed', 'stop', 'stream',
  'temperature', 'tool_choice', 'tools', 'top_p',
]);
const INFERENCE_ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const NO_FILTER = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};

interface IssuedToken {
  scope: string;
  expiresAt: number;
}

export async function startMockAzure(opts: MockAzureOptions): Promise<MockAzure> {
  const tokens = new Map<string, IssuedToken>();

  const server = await startMockServer<ScriptedResponse>((rec, _req, res) => {
    const url = new URL(rec.path, 'http://mock');
    send(res, server.next(url.pathname) ?? route(rec, url));
  });

  function route(rec: RecordedRequest, url: URL): Reply {
    const p = url.pathname;
    const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(p);
    if (token !== null) return rec.method === 'POST' ? issueToken(rec, decodeURIComponent(token[1]!)) : notFound();
    const classic = /^\/openai\/deployments\/([^/]+)\/(.+)$/.exec(p);
    if (classic !== null && rec.method === 'POST' && (OPERATIONS.has(classic[2]!) || classic[2] === 'images/generations')) {
      return azureOpenAI(rec, url, decodeURIComponent(classic[1]!), classic[2]!);
    }
    const v1 = /^\/openai\/v1\/(.+)$/.exec(p);
    if (v1 !== null && rec.method === 'POST' && OPERATIONS.has(v1[1]!)) return azureOpenAIv1(rec, v1[1]!);
    const foundryV1 = /^\/v1\/(.+)$/.exec(p);
    if (foundryV1 !== null && rec.method === 'POST' && OPERATIONS.has(foundryV1[1]!)) return foundry(rec, foundryV1[1]!, false);
    if (rec.method === 'POST' && OPERATIONS.has(p.slice(1))) return modelInference(rec, url, p.slice(1));
    return notFound();
  }

  // ---- Entra ID token endpoint (client credentials grant)

  function issueToken(rec: RecordedRequest, tenant: string): Reply {
    const entra = opts.entra;
    if (!/^application\/x-www-form-urlencoded/i.test(rec.headers['content-type'] ?? '')) {
      return aadError(400, 'invalid_request', 900144, "The request body must contain the following parameter: 'grant_type'.");
    }
    const form = new URLSearchParams(rec.body.toString('utf8'));
    if (entra === undefined || tenant !== entra.tenantId) {
      return aadError(400, 'invalid_request', 90002, `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`);
    }
    for (const name of ['grant_type', 'client_id', 'scope']) {
      if (!form.has(name)) return aadError(400, 'invalid_request', 900144, `The request body must contain the following parameter: '${name}'.`);
    }
    if (form.get('grant_type') !== 'client_credentials') {
      return aadError(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
    }
    if (form.get('client_id') !== entra.clientId) {
      return aadError(400, 'unauthorized_client', 700016, `Application with identifier '${form.get('client_id')}' was not found in the directory '${tenant}'.`);
    }
    if (form.get('client_secret') !== entra.clientSecret) {
      return aadError(401, 'invalid_client', 7000215, 'Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.');
    }
    const scope = form.get('scope')!;
    if (!scope.endsWith('/.default')) {
      return aadError(400, 'invalid_scope', 1002012, `The provided value for scope ${scope} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`);
    }
    const expiresIn = entra.expiresIn ?? 3599;
    const aud = scope.slice(0, -'/.default'.length);
    const jwt = [{ typ: 'JWT', alg: 'RS256' }, { aud, tid: tenant, appid: entra.clientId, exp: Math.floor(Date.now() / 1000) + expiresIn }]
      .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
      .concat(randomBytes(16).toString('base64url'))
      .join('.');
    tokens.set(jwt, { scope, expiresAt: Date.now() + expiresIn * 1000 });
    return { body: { token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: jwt } };
  }

  /** Whether a bearer token was issued here, is unexpired and is for `scope`'s audience. */
  function validToken(authorization: string | undefined, scope: string): boolean {
    const t = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    const issued = t === undefined ? undefined : tokens.get(t);
    return issued !== undefined && issued.scope === scope && issued.expiresAt > Date.now();
  }

  // ---- Azure OpenAI

  function azureOpenAI(rec: RecordedRequest, url: URL, deployment: string, op: string): Reply {
    const version = url.searchParams.get('api-version');
    if (version === null || !AZURE_OPENAI_API_VERSIONS.includes(version)) return notFound();
    const denied = azureOpenAIAuth(rec);
    if (denied !== null) return denied;
    const model = opts.deployments?.[deployment];
    if (model === undefined) return deploymentNotFound();
    return generate(rec, op, { label: deployment, model, filters: true });
  }

  function azureOpenAIv1(rec: RecordedRequest, op: string): Reply {
    const denied = azureOpenAIAuth(rec);
    if (denied !== null) return denied;
    const deployment = rec.json?.model;
    const model = typeof deployment === 'string' ? opts.deployments?.[deployment] : undefined;
    if (model === undefined) return deploymentNotFound();
    return generate(rec, op, { label: deployment, model, filters: true });
  }

  function azureOpenAIAuth(rec: RecordedRequest): Reply | null {
    const key = rec.headers['api-key'];
    if (key !== undefined) {
      return key === opts.apiKey ? null : azureError(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');
    }
    if (rec.headers.authorization !== undefined) {
      return validToken(rec.headers.authorization, COGNITIVE_SERVICES_SCOPE)
        ? null
        : azureError(401, '401', 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.');
    }
    return azureError(401, '401', 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.');
  }

  // ---- AI Foundry endpoint

  function modelInference(rec: RecordedRequest, url: URL, op: string): Reply {
    const version = url.searchParams.get('api-version');
    if (version === null) {
      return azureError(400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
    }
    if (!MODEL_INFERENCE_API_VERSIONS.includes(version)) {
      return azureError(400, 'InvalidApiVersionParameter', `The api-version '${version}' is invalid. The supported versions are '${MODEL_INFERENCE_API_VERSIONS.join("', '")}'.`);
    }
    return foundry(rec, op, true);
  }

  function foundry(rec: RecordedRequest, op: string, inferenceApi: boolean): Reply {
    const f = opts.foundry;
    if (f === undefined) return notFound();
    const auth = rec.headers.authorization;
    if (auth !== `Bearer ${opts.apiKey}` && !validToken(auth, AZURE_ML_SCOPE)) {
      return azureError(401, 'Unauthorized', 'Access denied: the bearer token or key is missing, invalid or for another audience (https://ml.azure.com).');
    }
    let label = 'foundry';
    if (f.kind === 'managed') {
      const named = rec.headers['azureml-model-deployment'];
      const deployments = f.deployments ?? [];
      if (typeof named === 'string' && !deployments.includes(named)) {
        return azureError(404, 'DeploymentNotFound', `No deployment named '${named}' exists in this endpoint. Deployments: ${deployments.join(', ')}.`);
      }
      label = typeof named === 'string' ? named : (deployments[0] ?? label);
    }
    if (inferenceApi && op === 'chat/completions' && rec.json !== undefined) {
      const problem = inferenceRules(rec);
      if (problem !== null) return problem;
    }
    return generate(rec, op, { label, model: f.model, filters: false });
  }

  /** The Model Inference API's checks: known roles, and extra parameters only as `extra-parameters` allows. */
  function inferenceRules(rec: RecordedRequest): Reply | null {
    const messages: any[] = Array.isArray(rec.json.messages) ? rec.json.messages : [];
    const badRole = messages.findIndex((m) => !INFERENCE_ROLES.has(m?.role));
    if (badRole !== -1) {
      return unprocessable(`Input should be 'system', 'user', 'assistant' or 'tool'`, ['body', 'messages', String(badRole), 'role'], messages[badRole]?.role);
    }
    const extra = Object.keys(rec.json).filter((k) => !INFERENCE_CHAT_FIELDS.has(k));
    const mode = rec.headers['extra-parameters'] ?? 'error';
    if (extra.length > 0 && mode === 'error') {
      return unprocessable(`Extra parameters ${JSON.stringify(extra)} are not allowed when extra-parameters is not set or set to be 'error'. Set extra-parameters to 'pass-through' to pass to the model.`, ['body', extra[0]!], rec.json[extra[0]!]);
    }
    if (mode === 'drop') for (const k of extra) delete rec.json[k];
    return null;
  }

  const isToken = (r: RecordedRequest): boolean => /\/oauth2\/v2\.0\/token$/.test(new URL(r.path, 'http://mock').pathname);
  return {
    url: server.url,
    requests: server.requests,
    tokenRequests: () => server.requests.filter(isToken),
    apiRequests: () => server.requests.filter((r) => !isToken(r)),
    enqueue: server.enqueue,
    reset: server.reset,
    close: server.close,
  };
}

// ---------------------------------------------------------------------------------------
// Answers

interface Reply extends ScriptedResponse {
  /** SSE payloads, each sent as `data: …\n\n`, then `data: [DONE]\n\n`. */
  sse?: string[];
}

function send(res: http.ServerResponse, r: Reply): void {
  const headers: Record<string, string> = {
    'x-request-id': randomUUID(),
    'apim-request-id': randomUUID(),
    'x-ms-region': 'Sweden Central',
    ...r.headers,
  };
  if (r.sse !== undefined) {
    res.writeHead(r.status ?? 200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const ev of [...r.sse, '[DONE]']) res.write(`data: ${ev}\n\n`);
    res.end();
    return;
  }
  const text = r.body === undefined ? '' : JSON.stringify(r.body);
  res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

function azureError(status: number, code: string, message: string): Reply {
  return { status, body: { error: { code, message } } };
}

const notFound = (): Reply => azureError(404, '404', 'Resource not found');

const deploymentNotFound = (): Reply =>
  azureError(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.');

function unprocessable(message: string, loc: string[], input: unknown): Reply {
  return { status: 422, body: { error: { code: 'Invalid input', status: 422, message, details: [{ loc, input }] } } };
}

function aadError(status: number, error: string, code: number, description: string): Reply {
  const trace = randomUUID();
  return {
    status,
    body: {
      error,
      // The identity platform puts trace details on lines after the AADSTS message.
      error_description: `AADSTS${code}: ${description}\r\nTrace ID: ${trace}\r\nCorrelation ID: ${randomUUID()}\r\nTimestamp: ${new Date().toISOString()}`,
      error_codes: [code],
      timestamp: new Date().toISOString(),
      trace_id: trace,
      correlation_id: randomUUID(),
      error_uri: `https://login.microsoftonline.com/error?code=${code}`,
    },
  };
}

interface Served {
  /** Which deployment answered; it opens the echoed text so tests can tell. */
  label: string;
  model: string;
  /** Azure OpenAI adds content-filter results; Foundry endpoints do not. */
  filters: boolean;
}

function generate(rec: RecordedRequest, op: string, s: Served): Reply {
  const body = rec.json;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { status: 400, body: { error: { code: null, message: 'We could not parse the JSON body of your request.', param: null, type: 'invalid_request_error' } } };
  }
  if (op === 'chat/completions') return chat(body, s);
  if (op === 'completions') return completion(body, s);
  if (op === 'images/generations') return image(body);
  return embeddings(body, s);
}

function chat(body: any, s: Served): Reply {
  if (!Array.isArray(body.messages)) return missing('messages');
  const lastUser = [...body.messages].reverse().find((m: any) => m?.role === 'user');
  const content = `[${s.label}] echo: ${textOf(lastUser?.content)}`;
  const pieces = content.split(/(?=\s)/);
  const promptTokens = body.messages.reduce((n: number, m: any) => n + countWords(textOf(m?.content)), 0);
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: pieces.length,
    total_tokens: promptTokens + pieces.length,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  const id = `chatcmpl-${randomBytes(15).toString('base64url')}`;
  const created = Math.floor(Date.now() / 1000);
  const filters = (extra: object = {}) => (s.filters ? { content_filter_results: { ...NO_FILTER, ...extra } } : {});
  const promptFilters = s.filters ? { prompt_filter_results: [{ prompt_index: 0, content_filter_results: NO_FILTER }] } : {};
  if (body.stream !== true) {
    return {
      body: {
        choices: [{ ...filters(), finish_reason: 'stop', index: 0, logprobs: null, message: { content, refusal: null, role: 'assistant' } }],
        created,
        id,
        model: s.model,
        object: 'chat.completion',
        ...promptFilters,
        system_fingerprint: 'fp_azure_mock',
        usage,
      },
    };
  }
  const chunk = (delta: object, finish: string | null, extra: object = {}) => ({
    choices: [{ ...extra, delta, finish_reason: finish, index: 0, logprobs: null }],
    created,
    id,
    model: s.model,
    object: 'chat.completion.chunk',
    system_fingerprint: 'fp_azure_mock',
  });
  const events: object[] = [];
  // Azure OpenAI opens a stream with the prompt's filter results in a chunk without choices.
  if (s.filters) events.push({ choices: [], created: 0, id: '', model: '', object: '', ...promptFilters });
  events.push(chunk({ content: '', refusal: null, role: 'assistant' }, null, s.filters ? { content_filter_results: {} } : {}));
  for (const p of pieces) events.push(chunk({ content: p }, null, filters()));
  events.push(chunk({}, 'stop', s.filters ? { content_filter_results: {} } : {}));
  if (body.stream_options?.include_usage === true) {
    events.push({ choices: [], created, id, model: s.model, object: 'chat.completion.chunk', system_fingerprint: 'fp_azure_mock', usage });
  }
  return { sse: events.map((e) => JSON.stringify(e)) };
}

function completion(body: any, s: Served): Reply {
  if (body.prompt === undefined) return missing('prompt');
  const prompt = Array.isArray(body.prompt) ? body.prompt.join(' ') : String(body.prompt);
  const text = `[${s.label}] echo: ${prompt}`;
  const base = { id: `cmpl-${randomBytes(15).toString('base64url')}`, object: 'text_completion', created: Math.floor(Date.now() / 1000), model: s.model };
  const usage = { prompt_tokens: countWords(prompt), completion_tokens: countWords(text), total_tokens: countWords(prompt) + countWords(text) };
  if (body.stream !== true) {
    return { body: { ...base, choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }], usage } };
  }
  const pieces = text.split(/(?=\s)/);
  return {
    sse: [...pieces.map((p) => ({ ...base, choices: [{ text: p, index: 0, logprobs: null, finish_reason: null }] })), { ...base, choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }] }].map((e) =>
      JSON.stringify(e),
    ),
  };
}

/** Images (DALL-E deployments), reached only through the generic proxy. */
function image(body: any): Reply {
  if (typeof body.prompt !== 'string') return missing('prompt');
  return { body: { created: Math.floor(Date.now() / 1000), data: [{ url: 'https://dalleproduse.blob.core.windows.net/private/images/mock.png', revised_prompt: body.prompt }] } };
}

function embeddings(body: any, s: Served): Reply {
  if (body.input === undefined) return missing('input');
  const items: unknown[] = Array.isArray(body.input) && !body.input.every((x: unknown) => typeof x === 'number') ? body.input : [body.input];
  const tokens = items.reduce<number>((n, it) => n + countWords(String(it)), 0);
  return {
    body: {
      object: 'list',
      data: items.map((it, index) => {
        const vec = vector(JSON.stringify(it));
        return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? float32Base64(vec) : vec };
      }),
      model: s.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
  };
}

function missing(param: string): Reply {
  return { status: 400, body: { error: { code: 'missing_required_parameter', message: `Missing required parameter: '${param}'.`, param, type: 'invalid_request_error' } } };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.filter((p) => p?.type === 'text').map((p) => String(p.text)).join(' ');
  return '';
}

/** A deterministic unit vector of 8 float32 values. */
function vector(key: string): number[] {
  const h = createHash('sha256').update(key).digest();
  const raw = Array.from({ length: 8 }, (_, i) => (h.readUInt32LE(i * 4) / 0xffffffff) * 2 - 1);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((v) => Math.fround(v / norm));
}
