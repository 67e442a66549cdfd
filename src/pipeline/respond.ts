/**
 * Respond: the answer written to the client with the gateway's headers in one
 * writeHead. A streamed answer is piped (back-pressure kept; a client that
 * leaves stops the provider's stream) through what watches it on the way: the
 * copy for the log and the usage charge (logs/capture.ts), the removal of
 * stream usage the client did not ask for, and the cache keeper, which stores
 * what the client got. A whole answer is charged, kept and sent at once.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { AnswerCapture } from '../logs/capture.js';
import { isHopByHop } from '../routing/headers.js';
import type { Answer, Outcome, RequestContext, Stage } from './context.js';
import type { AnswerUsage } from './limits.js';
import { LOGGED_ANSWER_BYTES } from './record.js';
import { stripAddedUsage } from './usage-strip.js';

export function respond(logging: boolean): Stage {
  return {
    name: 'respond',
    run(ctx) {
      const a = ctx.answer!;
      return typeof a.body === 'string' ? whole(ctx, a, a.body) : streamed(ctx, a, a.body, logging);
    },
  };
}

async function whole(ctx: RequestContext, a: Answer, text: string): Promise<Outcome> {
  ctx.answerText = text;
  await ctx.usage!.settle(text, () => text, ctx);
  await ctx.keeper!.keep(a.status, a.headers, text);
  const out = answerHeaders(ctx, a);
  out['content-length'] = Buffer.byteLength(text);
  ctx.res.writeHead(a.status, out);
  ctx.res.end(text);
  return 'done';
}

async function streamed(ctx: RequestContext, a: Answer, body: Readable, logging: boolean): Promise<Outcome> {
  const out = answerHeaders(ctx, a);
  if (a.addedUsage) delete out['content-length']; // the answer gets shorter
  ctx.res.writeHead(a.status, out);
  // Usage is read before the usage the client did not ask for is stripped; the cache keeps what the client gets.
  const read = watch(ctx, body, a, logging);
  ctx.cut = !(await pipeTo(ctx.keeper!.watch(a.addedUsage ? stripAddedUsage(read) : read, a.status, a.headers), ctx.res));
  return 'done';
}

/**
 * The answer's own headers but hop-by-hop ones, then the gateway's (which win), as one object for
 * writeHead: Node's fast path, no per-header setHeader.
 */
function answerHeaders(ctx: RequestContext, a: Answer): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in a.headers) {
    if (!isHopByHop(name)) out[name] = a.headers[name];
  }
  return ctx.gatewayHeaders(out);
}

/**
 * The answer's body on its way to the client, copied for the log and the
 * usage charge when either wants it; the same stream when neither does. An
 * error answer used nothing: reservations are given back at once. A
 * compressed answer cannot be read on the way: reservations stand. A charged
 * answer keeps as much as a logged one, for counting its tokens when it
 * reports no usage (a stream cut short: see the record stage).
 */
function watch(ctx: RequestContext, body: Readable, a: Answer, logging: boolean): Readable {
  const usage: AnswerUsage = ctx.usage!;
  const ok = a.status >= 200 && a.status < 300;
  if (!ok) void usage.release();
  const encoding = a.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    if (ok) void usage.keep();
    return body;
  }
  const charge = ok && usage.charging;
  if (!logging && !charge) return body;
  const capture = (ctx.capture = new AnswerCapture(LOGGED_ANSWER_BYTES));
  return charge ? capture.tap(body, (c) => usage.settle(c.tailText(), () => c.text(), ctx)) : capture.listen(body);
}

/**
 * Streams the answer to the client. pipe() keeps back-pressure; a provider
 * that breaks mid-stream closes the client's connection, and a client that
 * leaves stops the provider's stream; resolves to whether the whole answer
 * went out. (Not stream.pipeline: its per-call AbortController costs more
 * than the rest of the stage.)
 */
function pipeTo(body: Readable, res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.closed) {
      // The client left while the provider was answering.
      body.destroy();
      resolve(false);
      return;
    }
    body.once('error', () => res.destroy());
    res.once('close', () => {
      if (!body.readableEnded) body.destroy();
      resolve(res.writableFinished);
    });
    body.pipe(res);
  });
}
