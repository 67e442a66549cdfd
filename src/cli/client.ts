/**
 * The gateway as the commands reach it: --url or SWITCHYARD_URL (default
 * http://127.0.0.1:8787), --key or SWITCHYARD_API_KEY sent as
 * x-gateway-api-key. An error answer ends the command (exit 1) with the
 * gateway's message; no answer at all ends it with exit 3.
 */
import { CliError, EXIT, usage } from './exit.js';
import { intOption } from './args.js';

export interface Connection {
  /** Base URL without /v1. */
  url: string;
  key: string;
  timeoutMs: number;
}

export function connection(values: { url?: string | boolean; key?: string | boolean; timeout?: string | boolean }, env: NodeJS.ProcessEnv): Connection {
  const raw = (typeof values.url === 'string' ? values.url : undefined) ?? env.SWITCHYARD_URL ?? 'http://127.0.0.1:8787';
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) throw usage(`--url must be an http:// or https:// URL, got '${raw}'`);
  const key = (typeof values.key === 'string' ? values.key : undefined) ?? env.SWITCHYARD_API_KEY;
  if (key === undefined || key === '') throw usage('a gateway key is needed: --key or SWITCHYARD_API_KEY');
  // The gateway's own paths are under /v1: a URL given with it is the same gateway.
  const url = raw.replace(/\/+$/, '').replace(/\/v1$/, '');
  return { url, key, timeoutMs: intOption(values.timeout, 'timeout', 30_000, 1, 3_600_000) };
}

/** Calls `/v1<path>` and resolves to the JSON answer of a 2xx. */
export async function call(c: Connection, method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${c.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': c.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(c.timeoutMs),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; errors?: { code?: string }[]; message?: string } }).cause;
    const why = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (e as Error).name;
    throw new CliError(EXIT.unreachable, `no answer from the gateway at ${c.url} (${why})`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const message = (json as { error?: { message?: string } } | undefined)?.error?.message ?? text.slice(0, 500);
    throw new CliError(EXIT.refused, `${res.status}: ${message}`);
  }
  if (json === undefined) throw new CliError(EXIT.refused, `${res.status}: the answer is not JSON`);
  return json;
}

/** A query string of the options that are set. */
export function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}
