// Every call the console makes: the management API under /v1, with the gateway key signed in with.
// The key lives in sessionStorage only: gone when the tab closes, never in a URL or a cookie.
const KEY = 'switchyard.key';

export const session = {
  get: () => sessionStorage.getItem(KEY),
  set: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

/** The gateway's error envelope as an exception: status, message, and the field it names. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? null;
    this.param = error?.param ?? null;
  }
}

/** A query string from an object, leaving out empty values. */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** `path` is after /v1 (`/logs`); `body` is sent as JSON. */
export async function api(path, { method, body, query, key } = {}) {
  const headers = { 'x-gateway-api-key': key ?? session.get() ?? '' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`/v1${path}${qs(query)}`, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  if (res.status === 204) return null;
  const text = await res.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    throw new ApiError(res.status, { message: `not JSON: ${text.slice(0, 200)}` });
  }
  if (!res.ok) {
    if (res.status === 401 && key === undefined) window.dispatchEvent(new CustomEvent('switchyard:signed-out'));
    throw new ApiError(res.status, json?.error);
  }
  return json;
}
