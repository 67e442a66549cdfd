/**
 * The calls checks make (webhook, log, JWKS, images, partner APIs): through
 * the gateway's one upstream client, so the upstream address policy applies
 * and redirects are not followed, each with a timeout over the whole
 * exchange and a cap on the answer's size. Errors say what went wrong and
 * where, never the headers sent (they may hold a secret).
 */
import { Cancel } from '../upstream/cancel.js';
import { discard, isRedirect, send } from '../upstream/client.js';
import { UpstreamAddressDenied } from '../upstream/policy.js';

export interface Outbound {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  timeoutMs: number;
  /** The answer's body is read up to this many bytes; more is an error. */
  maxBytes: number;
}

export interface Inbound {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** What went wrong with an answer: a redirect, too many bytes, a status other than 2xx. */
class BadAnswer extends Error {}

/** The answer, read whole; throws on a refused address, a timeout, a redirect, an answer over `maxBytes`, a status other than 2xx. */
export async function call(o: Outbound): Promise<Inbound> {
  const where = originOf(o.url);
  const timer = new Cancel().withTimeout(o.timeoutMs);
  try {
    const headers: Record<string, string> = { ...o.headers };
    if (o.json !== undefined) headers['content-type'] = 'application/json';
    const res = await send({ url: o.url, method: o.method ?? 'POST', headers, body: o.json === undefined ? null : JSON.stringify(o.json) }, timer.cancel);
    if (isRedirect(res.statusCode)) {
      discard(res);
      throw new BadAnswer(`${where} answered ${res.statusCode}, a redirect, which the gateway does not follow`);
    }
    const declared = Number(res.headers['content-length']);
    if (declared > o.maxBytes) {
      discard(res);
      throw new BadAnswer(`${where} answered ${declared} bytes, over the ${o.maxBytes} allowed`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body) {
      total += (chunk as Buffer).length;
      if (total > o.maxBytes) {
        res.body.destroy();
        throw new BadAnswer(`${where} answered more than the ${o.maxBytes} bytes allowed`);
      }
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    if (res.statusCode < 200 || res.statusCode >= 300) throw new BadAnswer(`${where} answered ${res.statusCode}`);
    return { status: res.statusCode, headers: res.headers, body };
  } catch (e) {
    if (timer.timedOut()) throw new Error(`${where} did not answer within ${o.timeoutMs} ms`);
    if (e instanceof UpstreamAddressDenied || e instanceof BadAnswer) throw e;
    throw new Error(`could not reach ${where}: ${(e as { code?: string }).code ?? (e as Error).message}`);
  } finally {
    timer.release();
  }
}

/** The answer's body as a JSON object; throws when it is not one. */
export function jsonOf(i: Inbound, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(i.body.toString('utf8'));
  } catch {
    throw new Error(`${what} did not answer JSON`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${what} did not answer a JSON object`);
  return v as Record<string, unknown>;
}

/** scheme://host:port of a URL: what errors and data name, never its path or query (they may carry a token). */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the URL';
  }
}
