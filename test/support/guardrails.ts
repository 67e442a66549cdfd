/**
 * The official OpenAI SDK as a guardrails test's client: it throws on a 446
 * or 400, so the client remembers the last JSON body it received, and
 * `refusal` returns the status and body of a refused call.
 */
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from './gateway.js';

type Json = Record<string, any>;

export interface WatchedClient {
  client: OpenAI;
  refusal(p: Promise<unknown>): Promise<{ status: number; body: Json }>;
}

export function watchedClient(gw: Pick<TestGateway, 'v1'>, gatewayKey: string): WatchedClient {
  let lastBody: Json | null = null;
  const client = new OpenAI({
    apiKey: 'unused',
    baseURL: gw.v1,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gatewayKey },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      lastBody = (res.headers.get('content-type') ?? '').includes('json') ? ((await res.clone().json()) as Json) : null;
      return res;
    },
  });
  return {
    client,
    async refusal(p) {
      const e = await p.then(
        () => assert.fail('expected the SDK to throw'),
        (err: unknown) => err,
      );
      assert.ok(e instanceof OpenAI.APIError, String(e));
      return { status: e.status!, body: lastBody! };
    },
  };
}
