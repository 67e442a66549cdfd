/**
 * Google's error answers → the contract's envelope, the provider's status kept.
 * Google APIs answer errors as a google.rpc.Status in JSON:
 * `{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT","details":[…]}}`
 * (https://cloud.google.com/apis/design/errors#http_mapping); a streamed call
 * may wrap it in an array. Anything else (an HTML page from a frontend) is
 * quoted in the message.
 */
import { GatewayError } from '../../shared/errors.js';
import type { GoogleErrorBody } from './wire.js';

export function googleError(status: number, raw: Buffer): GatewayError {
  const text = raw.toString('utf8');
  let body: GoogleErrorBody | undefined;
  try {
    const parsed = JSON.parse(text) as GoogleErrorBody | GoogleErrorBody[];
    body = Array.isArray(parsed) ? parsed[0] : parsed;
  } catch {
    // not JSON: quoted below
  }
  const e = body?.error;
  if (e === undefined || typeof e.message !== 'string') {
    const excerpt = text.trim().slice(0, 300);
    return new GatewayError(status, `provider answered ${status}${excerpt === '' ? '' : `: ${excerpt}`}`);
  }
  return new GatewayError(status, e.message, typeof e.status === 'string' ? { code: e.status.toLowerCase() } : {});
}
