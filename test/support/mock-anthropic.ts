// A mock Anthropic Messages API on loopback. It speaks Anthropic's wire format
// (https://docs.anthropic.com/en/api/messages): POST /v1/messages with x-api-key and
// anthropic-version, named SSE events when streaming, Anthropic's error body and
// statuses, and it checks what the real API checks (credential, version header,
// required fields, unknown fields, roles, tool_use/tool_result pairing, image
// sources, thinking budget) so a translation mistake fails here as it would there.
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { countWords, startMockServer, type RecordedRequest } from './mock-server.js';

export interface MockBlock {
  type: string;
  [key: string]: unknown;
}

/** A whole message to answer with (streamed as Anthropic streams it when the request says stream: true). */
export interface MockMessage {
  content: MockBlock[];
  stop_reason?: string;
  stop_sequence?: string | null;
  usage?: Record<string, number>;
  model?: string;
}

export interface AnthropicScript {
  status?: number;
  /** Anthropic's error body: {type:"error", error:{type, message}, request_id}. */
  error?: { type: string; message: string };
  message?: MockMessage;
  /** Stream events sent as they are, each framed `event: <type>\ndata: <json>\n\n`. */
  events?: Record<string, unknown>[];
  /** Raw body text (e.g. not JSON). */
  raw?: string;
  /** Extra response headers (e.g. retry-after on a 429). */
  headers?: Record<string, string>;
}

export interface MockAnthropicOptions {
  apiKey?: string;
  name?: string;
  /** Frame SSE with \r\n line ends. */
  crlf?: boolean;
  /** Write the SSE body in pieces of this many bytes (tests the gateway's reassembly). */
  fragment?: number;
}

export interface MockAnthropic {
  /** http://127.0.0.1:<port>: Anthropic's base URL form, without /v1. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Answers for the next POST /v1/messages, in order; then the default echo resumes. */
  enqueue(...scripts: AnthropicScript[]): void;
  reset(): void;
  close(): Promise<void>;
}

const TOP_LEVEL = new Set([
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k',
  'tools', 'tool_choice', 'thinking', 'metadata', 'service_tier', 'output_config', 'container', 'mcp_servers',
  'context_management', 'inference_geo',
]);

/** The one path scripted answers are for. */
const MESSAGES = '/v1/messages';
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export async function startMockAnthropic(opts: MockAnthropicOptions = {}): Promise<MockAnthropic> {
  const name = opts.name ?? 'claude-mock';
  const server = await startMockServer<AnthropicScript>(async (rec, _req, res): Promise<void> => {
    const denied = checkHeaders(rec.headers, opts.apiKey);
    if (denied) return sendError(res, denied.status, denied.type, denied.message);
    const pathname = new URL(rec.path, 'http://mock').pathname;
    if (rec.method === 'GET' && pathname === '/v1/messages/batches') {
      return sendJson(res, 200, { data: [], has_more: false, first_id: null, last_id: null });
    }
    if (rec.method === 'POST' && pathname === '/v1/messages/count_tokens') {
      return sendJson(res, 200, { input_tokens: countWords(JSON.stringify(rec.json?.messages ?? '')) });
    }
    if (rec.method !== 'POST' || pathname !== MESSAGES) return sendError(res, 404, 'not_found_error', 'Not found');

    if (rec.json === undefined || typeof rec.json !== 'object' || Array.isArray(rec.json)) {
      return sendError(res, 400, 'invalid_request_error', 'There was an issue with the formatting or content of your request body');
    }
    const problem = validate(rec.json);
    if (problem) return sendError(res, 400, 'invalid_request_error', problem);

    const script = server.next(MESSAGES);
    if (script?.raw !== undefined) {
      res.writeHead(script.status ?? 200, { 'content-type': 'text/plain', ...anthropicHeaders() });
      return void res.end(script.raw);
    }
    if (script?.error) return sendError(res, script.status ?? 400, script.error.type, script.error.message, script.headers);
    if (script?.events) return sendEvents(res, script.events, opts);
    const message = buildMessage(rec.json, script?.message, name);
    if (rec.json.stream === true) return sendEvents(res, toEvents(message), opts);
    sendJson(res, script?.status ?? 200, message);
  }, { json: 'non-empty' });

  return {
    url: server.url,
    requests: server.requests,
    enqueue: (...s) => server.enqueue(MESSAGES, ...s),
    reset: server.reset,
    close: server.close,
  };
}

// ---------------------------------------------------------------------------
// Checks

function checkHeaders(h: http.IncomingHttpHeaders, apiKey: string | undefined): { status: number; type: string; message: string } | undefined {
  if (apiKey !== undefined) {
    if (h['x-api-key'] === undefined) return { status: 401, type: 'authentication_error', message: 'x-api-key header is required' };
    if (h['x-api-key'] !== apiKey) return { status: 401, type: 'authentication_error', message: 'invalid x-api-key' };
  }
  if (h['anthropic-version'] === undefined) return { status: 400, type: 'invalid_request_error', message: 'anthropic-version: header is required' };
  if (h['anthropic-version'] !== '2023-06-01') {
    return { status: 400, type: 'invalid_request_error', message: `anthropic-version: invalid version '${h['anthropic-version']}'` };
  }
  return undefined;
}

/** Anthropic's own validation messages, for the rules a translator can get wrong. */
function validate(b: any): string | undefined {
  for (const key of Object.keys(b)) if (!TOP_LEVEL.has(key)) return `${key}: Extra inputs are not permitted`;
  if (typeof b.model !== 'string') return 'model: Field required';
  if (b.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(b.max_tokens) || b.max_tokens < 1) return 'max_tokens: Input should be a valid integer greater than or equal to 1';
  if (!Array.isArray(b.messages)) return 'messages: Field required';
  if (b.temperature !== undefined && (typeof b.temperature !== 'number' || b.temperature < 0 || b.temperature > 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }
  if (b.system !== undefined && typeof b.system !== 'string') {
    if (!Array.isArray(b.system) || b.system.some((s: any) => s?.type !== 'text' || typeof s.text !== 'string')) return 'system: Input should be a valid list of text blocks';
  }
  if (b.stop_sequences !== undefined && (!Array.isArray(b.stop_sequences) || b.stop_sequences.some((s: unknown) => typeof s !== 'string'))) {
    return 'stop_sequences: Input should be a valid list of strings';
  }
  if (b.tool_choice !== undefined && !Array.isArray(b.tools)) return 'tool_choice: tool_choice may only be specified while providing tools';
  for (const [i, t] of (b.tools ?? []).entries()) {
    if (t.type === undefined && (typeof t.name !== 'string' || typeof t.input_schema !== 'object')) return `tools.${i}.input_schema: Field required`;
  }
  if (b.thinking?.type === 'enabled') {
    if (!(b.thinking.budget_tokens >= 1024)) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (b.max_tokens <= b.thinking.budget_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  }
  let previousToolUses: string[] = [];
  for (const [i, m] of b.messages.entries()) {
    if (m?.role !== 'user' && m?.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const blocks: any[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(blocks)) return `messages.${i}.content: Input should be a valid list`;
    if (blocks.length === 0 && i < b.messages.length - 1) return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    const results: string[] = [];
    for (const [k, block] of blocks.entries()) {
      const at = `messages.${i}.content.${k}`;
      switch (block?.type) {
        case 'text':
          if (typeof block.text !== 'string' || block.text === '') return 'messages: text content blocks must be non-empty';
          break;
        case 'image': {
          const s = block.source;
          if (s?.type === 'base64' && !IMAGE_TYPES.has(s.media_type)) return `${at}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
          if (s?.type === 'url' && typeof s.url !== 'string') return `${at}.image.source.url.url: Field required`;
          if (s?.type !== 'base64' && s?.type !== 'url') return `${at}.image.source: Input tag '${s?.type}' does not match any of the expected tags`;
          break;
        }
        case 'tool_use':
          if (m.role !== 'assistant') return `${at}: tool_use blocks are only allowed in assistant messages`;
          if (typeof block.input !== 'object' || block.input === null || Array.isArray(block.input)) return `${at}.tool_use.input: Input should be a valid dictionary`;
          break;
        case 'tool_result':
          if (m.role !== 'user') return `${at}: tool_result blocks are only allowed in user messages`;
          if (!previousToolUses.includes(block.tool_use_id)) {
            return `${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
          }
          if (results.length !== k) return `${at}: tool_result blocks must come first in the user message content`;
          results.push(block.tool_use_id);
          break;
        case 'thinking':
        case 'redacted_thinking':
          if (m.role !== 'assistant') return `${at}: thinking blocks are only allowed in assistant messages`;
          break;
        case 'document':
          break;
        default:
          return `${at}: Input tag '${block?.type}' found using 'type' does not match any of the expected tags`;
      }
    }
    const missing = previousToolUses.filter((id) => !results.includes(id));
    if (missing.length > 0) return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`;
    previousToolUses = m.role === 'assistant' ? blocks.filter((x) => x.type === 'tool_use').map((x) => x.id) : [];
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Answers

/** The scripted message, or an echo of the last user text (as JSON under output_config.format; thinking first when enabled). */
function buildMessage(req: any, scripted: MockMessage | undefined, name: string): Record<string, unknown> {
  const inputTokens = countWords(JSON.stringify({ system: req.system ?? '', messages: req.messages }));
  if (scripted) {
    return {
      id: messageId(), type: 'message', role: 'assistant', model: scripted.model ?? req.model, content: scripted.content,
      stop_reason: scripted.stop_reason ?? 'end_turn', stop_sequence: scripted.stop_sequence ?? null,
      usage: scripted.usage ?? { input_tokens: inputTokens, output_tokens: 7 },
    };
  }
  const last = [...req.messages].reverse().find((m: any) => m.role === 'user');
  const said = (typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : last?.content ?? [])
    .filter((b: any) => b.type === 'text')
    .map((b: any) => b.text)
    .join(' ');
  let text = req.output_config?.format ? JSON.stringify({ echo: said }) : `[${name}] echo: ${said}`;
  let stopReason = 'end_turn';
  let stopSequence: string | null = null;
  for (const s of req.stop_sequences ?? []) {
    const at = text.indexOf(s);
    if (at !== -1) {
      text = text.slice(0, at);
      stopReason = 'stop_sequence';
      stopSequence = s;
    }
  }
  let words = text.split(/(?=\s)/);
  if (words.length > req.max_tokens) {
    words = words.slice(0, req.max_tokens);
    text = words.join('');
    stopReason = 'max_tokens';
    stopSequence = null;
  }
  const content: MockBlock[] = [];
  if (req.thinking?.type === 'enabled') content.push({ type: 'thinking', thinking: 'The user wants an echo.', signature: 'sig_EqQBCgIYAhIM' });
  content.push({ type: 'text', text });
  return {
    id: messageId(), type: 'message', role: 'assistant', model: req.model, content, stop_reason: stopReason, stop_sequence: stopSequence,
    usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: words.length },
  };
}

/** A whole message as Anthropic streams it: start, one block at a time in deltas, message_delta, stop. */
export function toEvents(message: Record<string, any>): Record<string, unknown>[] {
  const usage = message.usage as Record<string, number>;
  const events: Record<string, unknown>[] = [
    { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } },
  ];
  (message.content as MockBlock[]).forEach((block, index) => {
    switch (block.type) {
      case 'text':
        events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        if (index === 0) events.push({ type: 'ping' });
        for (const piece of (block.text as string).split(/(?=\s)/)) {
          events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
        }
        break;
      case 'tool_use': {
        events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        const json = JSON.stringify(block.input);
        const third = Math.ceil(json.length / 3);
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } });
        for (let i = 0; i < json.length; i += third) {
          events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + third) } });
        }
        break;
      }
      case 'thinking':
        events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        for (const piece of (block.thinking as string).split(/(?=\s)/)) {
          events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } });
        }
        events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
        break;
      default:
        events.push({ type: 'content_block_start', index, content_block: block });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage });
  events.push({ type: 'message_stop' });
  return events;
}

async function sendEvents(res: http.ServerResponse, events: Record<string, unknown>[], opts: MockAnthropicOptions): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...anthropicHeaders() });
  const nl = opts.crlf ? '\r\n' : '\n';
  const text = events.map((e) => `event: ${String(e.type)}${nl}data: ${JSON.stringify(e)}${nl}${nl}`).join('');
  const bytes = Buffer.from(text);
  const size = opts.fragment ?? bytes.length;
  for (let i = 0; i < bytes.length; i += size) {
    if (!res.write(bytes.subarray(i, i + size))) await once(res, 'drain');
    if (opts.fragment) await sleep(0);
  }
  res.end();
}

function anthropicHeaders(): Record<string, string> {
  return { 'request-id': `req_${randomBytes(12).toString('hex')}`, 'anthropic-organization-id': '00000000-0000-4000-8000-000000000000' };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  res.writeHead(status, { 'content-type': 'application/json', ...anthropicHeaders(), ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: http.ServerResponse, status: number, type: string, message: string, headers?: Record<string, string>): void {
  sendJson(res, status, { type: 'error', error: { type, message }, request_id: `req_${randomBytes(12).toString('hex')}` }, headers);
}

function messageId(): string {
  return `msg_01${randomBytes(11).toString('hex')}`;
}
