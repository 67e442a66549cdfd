/**
 * Responses: the stage of POST /v1/responses that makes the turn whole
 * before the cache is asked and a provider is called:
 *
 * - `previous_response_id` naming a response the gateway stored: the earlier
 *   turns' input and output items (never their `instructions`) go before
 *   this turn's input, so every provider gets the conversation; one the
 *   gateway did not make is left to the provider that stores it (OpenAI,
 *   Azure) or refused where the gateway answers over chat (providers/responses).
 * - `truncation`: when the model's context window is known (the catalog)
 *   and the input would overflow it, `disabled` (the default) is a 400
 *   (spec, Errors rule 1) and `auto` drops the oldest items until it fits.
 * - `store` (default true): this turn's input items, with ids, are kept on
 *   the context for the keep-response step (response-keeper.ts); an input too
 *   large to store is a 400.
 */
import { catalog } from '../catalog/catalog.js';
import { countUsage } from '../logs/token-count.js';
import { isGatewayResponseId, itemId } from '../providers/responses/ids.js';
import { GatewayError, invalid } from '../shared/errors.js';
import { single } from '../shared/headers.js';
import type { ResponseRepo } from '../store/responses.js';
import type { Outcome, RequestContext, Stage } from './context.js';

/** Bytes of one turn's input, and of one response's output, the store keeps. */
export const MAX_STORED_BYTES = 4 * 1024 * 1024;
/** Turns of a previous_response_id chain sent upstream. */
export const MAX_CHAIN_TURNS = 100;
/** Characters of stored input and output a chain may bring back: a chain is read, parsed and sent whole, past the body limit. */
export const MAX_CHAIN_CHARS = 16 * 1024 * 1024;
/** Below this many characters no model's context window overflows: nothing is counted. */
const NEVER_OVERFLOWS = 4096;

type Item = Record<string, unknown>;

export function responses(repo: ResponseRepo): Stage {
  return {
    name: 'responses',
    run(ctx) {
      if (ctx.endpoint !== 'responses' || ctx.body === null) return 'next';
      return prepare(ctx, repo);
    },
  };
}

async function prepare(ctx: RequestContext, repo: ResponseRepo): Promise<Outcome> {
  const body = ctx.body!;
  const own = inputItems(body.input);
  if (body.store !== false) {
    const turn = storedItems(own);
    if (JSON.stringify(turn).length > MAX_STORED_BYTES) {
      return ctx.refuse(invalid(`input: larger than the ${MAX_STORED_BYTES} bytes the gateway stores of a turn; send store: false to not store it`, 'input'));
    }
    ctx.responseTurn = { input: turn };
  }
  let history: Item[] = [];
  const previous = body.previous_response_id;
  if (isGatewayResponseId(previous)) {
    const chain = await repo.chain(ctx.key.workspaceId, previous, MAX_CHAIN_TURNS, MAX_CHAIN_CHARS);
    if (chain.tooLarge) {
      return ctx.refuse(invalid(`previous_response_id: the conversation holds more than the ${MAX_CHAIN_CHARS} characters the gateway sends again; start a new one`, 'previous_response_id'));
    }
    if (chain.turns.length === 0) {
      return ctx.refuse(invalid(`previous_response_id: no stored response '${previous}'`, 'previous_response_id', 'previous_response_not_found'));
    }
    if (chain.cut) return ctx.refuse(invalid(`previous_response_id: the conversation is longer than the ${MAX_CHAIN_TURNS} turns the gateway sends`, 'previous_response_id'));
    history = chain.turns.flatMap((t) => [...(JSON.parse(t.input) as Item[]), ...outputOf(t.response)]).map(sendable);
  }
  const fitted = await fit(ctx, body, history, own);
  if (fitted instanceof GatewayError) return ctx.refuse(fitted);
  if (fitted !== null) {
    body.input = fitted;
    // The cache keys, and the provider receives, the whole conversation.
    ctx.raw = Buffer.from(JSON.stringify(body));
  }
  return 'next';
}

/** The request's input as items: a string is one user message. */
function inputItems(input: unknown): Item[] {
  return typeof input === 'string' ? [{ role: 'user', content: input }] : (input as Item[]);
}

/** Input items as OpenAI lists them (input_items): typed, content as parts, each with an id. */
function storedItems(items: readonly Item[]): Item[] {
  return items.map((item) => {
    const type = item.type ?? 'message';
    if (type !== 'message') return { ...item, id: item.id ?? itemId(type === 'function_call' ? 'fc' : type === 'function_call_output' ? 'fco' : 'item') };
    const content = typeof item.content === 'string' ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }] : item.content;
    return { id: item.id ?? itemId('msg'), type: 'message', role: item.role, content, status: 'completed' };
  });
}

/** A stored Response's output items that go back upstream: not its reasoning (no provider over chat takes it back). */
function outputOf(response: string): Item[] {
  const output = (JSON.parse(response) as { output?: Item[] }).output ?? [];
  return output.filter((item) => item.type !== 'reasoning');
}

/** A stored item as input: without the gateway's ids and statuses, which no provider knows. */
function sendable(item: Item): Item {
  const { id: _id, status: _status, ...rest } = item;
  return rest;
}

/**
 * The input to send (history, then this turn's), fitted to the model's
 * context window as `truncation` says; null when it is the client's own,
 * unchanged; a 400 when it cannot fit.
 */
async function fit(ctx: RequestContext, body: Record<string, unknown>, history: Item[], own: Item[]): Promise<Item[] | null | GatewayError> {
  const all = history.length === 0 ? null : [...history, ...own];
  const items = all ?? own;
  const instructions = typeof body.instructions === 'string' ? body.instructions : '';
  const chars = JSON.stringify(items).length + instructions.length;
  if (chars <= NEVER_OVERFLOWS) return all;
  const window = contextWindow(ctx, body.model);
  // A token is at least one character: text that is no longer than the window fits.
  if (window === null || chars <= window) return all;
  const tokens = await Promise.all(items.map(async (item) => (await countUsage('responses', { model: body.model, input: [item] }, null))?.promptTokens ?? 0));
  const fixed = instructions === '' ? 0 : ((await countUsage('responses', { model: body.model, instructions }, null))?.promptTokens ?? 0);
  let total = fixed + tokens.reduce((a, b) => a + b, 0);
  if (total <= window) return all;
  const overflow = (): GatewayError =>
    new GatewayError(400, `input: ${total} tokens exceed the context window of ${String(body.model)} (${window} tokens)${body.truncation === 'auto' ? ' even with the earlier turns dropped' : "; truncation: 'auto' drops the oldest turns"}`, {
      param: 'input',
      code: 'context_length_exceeded',
    });
  if (body.truncation !== 'auto') return overflow();
  // Oldest first, never this turn's own input.
  let drop = 0;
  while (total > window && drop < history.length) total -= tokens[drop++]!;
  if (total > window) return overflow();
  return items.slice(drop);
}

/** The model's context window from the catalog: at the provider named before routing, else any provider listing the model. */
function contextWindow(ctx: RequestContext, model: unknown): number | null {
  if (typeof model !== 'string') return null;
  const root = ctx.plan!.root;
  const provider = root.kind === 'leaf' ? (root.node.provider ?? single(ctx.req.headers['x-gateway-provider'])) : undefined;
  const found = provider === undefined ? null : catalog.find(provider, model);
  return (found ?? catalog.models.find((m) => m.model === model && m.contextWindow !== null))?.contextWindow ?? null;
}
