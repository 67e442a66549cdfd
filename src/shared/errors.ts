/**
 * The one error type of the gateway. Everything the gateway itself refuses or
 * fails at becomes a GatewayError, and the server turns it into the contract's
 * envelope: {"error":{"message","type","code","param"}}.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'timeout_error'
  | 'rate_limit_error'
  | 'upstream_error'
  | 'server_error'
  /** A guardrail denied the request (446), as Portkey names it. */
  | 'hooks_failed';

export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | null;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    message: string,
    opts: { type?: ErrorType; code?: string; param?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = status;
    this.type = opts.type ?? defaultType(status);
    this.code = opts.code ?? defaultCode(status);
    this.param = opts.param ?? null;
    this.headers = opts.headers;
  }

  toJSON(): { error: { message: string; type: string; code: string; param: string | null } } {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

function defaultType(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 408) return 'timeout_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 502 && status <= 504) return 'upstream_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function defaultCode(status: number): string {
  switch (status) {
    case 400: return 'invalid_request';
    case 401: return 'invalid_api_key';
    case 403: return 'permission_denied';
    case 404: return 'not_found';
    case 409: return 'conflict';
    case 408: return 'request_timeout';
    case 413: return 'payload_too_large';
    case 429: return 'rate_limit_exceeded';
    case 502: return 'bad_gateway';
    case 503: return 'service_unavailable';
    case 504: return 'gateway_timeout';
    default: return status >= 500 ? 'internal_error' : 'invalid_request';
  }
}

/** 400 naming the offending field or config path. */
export function invalid(message: string, param: string | null = null, code = 'invalid_request'): GatewayError {
  return new GatewayError(400, message, { param, code });
}

/** Errors as values at boundaries (parsing, validation). */
export type Result<T, E = GatewayError> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });
