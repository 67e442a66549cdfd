/**
 * The one pooled HTTP client for every provider call: undici's Agent keeps
 * connections alive per origin, which is most of the gateway's speed.
 * Timeouts are the router's job (request_timeout → 408), so undici's own are
 * off for headers and relaxed for bodies: a long stream must not be cut.
 */
import { Agent, request, type Dispatcher } from 'undici';
import type { Readable } from 'node:stream';

const agent = new Agent({
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: 512,
  pipelining: 1,
  headersTimeout: 0,
  bodyTimeout: 0,
});

export interface UpstreamRequest {
  url: string;
  method: string;
  headers: Record<string, string | string[]>;
  body: string | Buffer | Readable | null;
}

export type UpstreamResponse = Dispatcher.ResponseData;

export function send(req: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse> {
  return request(req.url, {
    dispatcher: agent,
    method: req.method as Dispatcher.HttpMethod,
    headers: req.headers,
    body: req.body,
    signal,
  });
}

/** Let go of a response we will not relay (a failed attempt we retry or fall back from). */
export function discard(res: UpstreamResponse): void {
  res.body.dump({ limit: 64 * 1024 }).catch(() => {});
}

export function closeUpstreams(): Promise<void> {
  return agent.close();
}
