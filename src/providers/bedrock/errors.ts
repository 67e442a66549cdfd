/**
 * Bedrock's errors in the contract's envelope, the status kept.
 *
 * HTTP errors (rest-json protocol): the status, an `x-amzn-ErrorType` header
 * naming the exception (`ValidationException:http://internal.amazon.com/…`),
 * and a body `{"message": "…"}` (`Message` from some front ends).
 * Stream errors: an eventstream message with `:message-type` `exception`, the
 * exception in `:exception-type` (camelCase member names of
 * ConverseStreamOutput) and `{"message"}` as payload; or `:message-type`
 * `error` with `:error-code` and `:error-message` headers.
 * Statuses from the service model's `error.httpStatusCode` of each exception.
 */
import { GatewayError } from '../../shared/errors.js';
import type { ProviderHeaders } from '../contract.js';
import type { BedrockErrorBody } from './wire.js';

/** An error answer of any Bedrock operation. */
export function bedrockError(status: number, raw: Buffer, headers?: ProviderHeaders): GatewayError {
  const text = raw.toString('utf8');
  let message: string | undefined;
  try {
    const body = JSON.parse(text) as BedrockErrorBody;
    message = body.message ?? body.Message;
  } catch {
    // Not JSON (a load balancer's page): its text is still the best message.
    message = text.trim() || undefined;
  }
  const errorType = firstHeader(headers?.['x-amzn-errortype'])?.split(':')[0];
  return new GatewayError(status, message ?? `bedrock answered ${status}`, errorType === undefined ? {} : { code: errorType });
}

/** Status of each exception a ConverseStream may send mid-stream. */
const STREAM_EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  validationException: 400,
  throttlingException: 429,
  modelStreamErrorException: 424,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

/** An exception message inside a ConverseStream. */
export function streamException(exceptionType: string, payload: Buffer): GatewayError {
  let message: string | undefined;
  try {
    message = (JSON.parse(payload.toString('utf8')) as BedrockErrorBody).message;
  } catch {
    message = undefined;
  }
  const code = exceptionType.charAt(0).toUpperCase() + exceptionType.slice(1);
  return new GatewayError(STREAM_EXCEPTION_STATUS[exceptionType] ?? 500, message ?? `bedrock stream failed: ${code}`, { code });
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
