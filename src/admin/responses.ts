/**
 * Stored responses (spec: "Stored responses"): GET /v1/responses/:id, GET
 * /v1/responses/:id/input_items, DELETE /v1/responses/:id, for the responses
 * the gateway made and stored (`resp_sy…`, pipeline/response-keeper.ts), in
 * the caller's workspace only: another workspace's response is unknown here
 * (404), as one that never existed. Other ids are a provider's own (OpenAI
 * stores its responses): those requests go on to the generic proxy.
 *
 * The caller needs completions.write, the scope that made the response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sendJson } from '../http/respond.js';
import type { StoredResponsesApi } from '../http/server.js';
import { isGatewayResponseId } from '../providers/responses/ids.js';
import { GatewayError, invalid, ok, type Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { ResponseRepo } from '../store/responses.js';

/** OpenAI's `include` values; those about tools the gateway does not run have nothing to add. */
const INCLUDES = new Set([
  'file_search_call.results',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
  'web_search_call.action.sources',
]);

type Item = Record<string, unknown>;

export class StoredResponses implements StoredResponsesApi {
  constructor(private readonly repo: ResponseRepo) {}

  owns(method: string, sub: string): boolean {
    // Asked of every request under /v1: the model endpoints pass without an array made.
    if (!sub.startsWith('/responses/')) return false;
    const parts = sub.split('/'); // ['', 'responses', id, ('input_items')]
    if (parts[1] !== 'responses' || !isGatewayResponseId(parts[2])) return false;
    if (parts.length === 3) return method === 'GET' || method === 'DELETE';
    return parts.length === 4 && parts[3] === 'input_items' && method === 'GET';
  }

  async handle(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, sub: string, query: string): Promise<void> {
    const [, , id, list] = sub.split('/') as [string, string, string, string | undefined];
    const q = new URLSearchParams(query);
    const include = includes(q);
    if (!include.ok) return sendError(res, include.error);
    const workspace = key.workspaceId;
    if (req.method === 'DELETE') {
      if (!(await this.repo.delete(workspace, id))) return sendError(res, unknown(id));
      return sendJson(res, 200, { id, object: 'response', deleted: true });
    }
    const found = await this.repo.get(workspace, id);
    if (found === null) return sendError(res, unknown(id));
    if (list === undefined) return sendJson(res, 200, JSON.parse(found.response));
    const page = itemPage(JSON.parse(found.input) as Item[], q, include.value.has('message.input_image.image_url'));
    return page.ok ? sendJson(res, 200, page.value) : sendError(res, page.error);
  }
}

function unknown(id: string): GatewayError {
  return new GatewayError(404, `no stored response '${id}'`, { code: 'response_not_found' });
}

/** `include` (or `include[]`, as OpenAI's SDKs send arrays), each a known value. */
function includes(q: URLSearchParams): Result<Set<string>> {
  const values = [...q.getAll('include'), ...q.getAll('include[]')].flatMap((v) => v.split(','));
  for (const v of values) if (!INCLUDES.has(v)) return { ok: false, error: invalid(`include: '${v}' is not one of ${[...INCLUDES].join(', ')}`, 'include') };
  return ok(new Set(values));
}

/** One page of a response's input items: `order` asc (default) or desc, `limit` 1..100 (20), `after` / `before` an item id. */
function itemPage(items: Item[], q: URLSearchParams, withImages: boolean): Result<Record<string, unknown>> {
  const limit = q.get('limit') === null ? 20 : Number(q.get('limit'));
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return { ok: false, error: invalid('limit: must be an integer from 1 to 100', 'limit') };
  const order = q.get('order') ?? 'asc';
  if (order !== 'asc' && order !== 'desc') return { ok: false, error: invalid("order: must be 'asc' or 'desc'", 'order') };
  let ordered = order === 'asc' ? items : [...items].reverse();
  for (const [name, keep] of [['after', (i: number) => ordered.slice(i + 1)], ['before', (i: number) => ordered.slice(0, i)]] as const) {
    const at = q.get(name);
    if (at === null) continue;
    const i = ordered.findIndex((item) => item.id === at);
    if (i === -1) return { ok: false, error: invalid(`${name}: no input item '${at}' in this response`, name) };
    ordered = keep(i);
  }
  // `before` pages back: the items just before it.
  const data = (q.get('before') !== null && q.get('after') === null ? ordered.slice(-limit) : ordered.slice(0, limit)).map((item) => (withImages ? item : withoutImageUrls(item)));
  return ok({
    object: 'list',
    data,
    has_more: ordered.length > limit,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data[data.length - 1]?.id as string | undefined) ?? null,
  });
}

/** input_image parts without their URLs (include message.input_image.image_url keeps them). */
function withoutImageUrls(item: Item): Item {
  if (!Array.isArray(item.content) || !item.content.some((p: Item) => p?.type === 'input_image')) return item;
  return { ...item, content: item.content.map((p: Item) => (p?.type === 'input_image' ? { ...p, image_url: null } : p)) };
}
