/**
 * Cohere's error answers → the contract's envelope, Cohere's status kept
 * (including its own 498 "blocked token" and 499 "cancelled"). Every error
 * status answers `{"id"?: "…", "message": "…"}` (Cohere's OpenAPI, components
 * BadRequest … GatewayTimeout).
 */
import { GatewayError } from '../../shared/errors.js';
import type { CohereErrorBody } from './wire.js';

export function cohereError(status: number, raw: Buffer): GatewayError {
  const text = raw.toString('utf8');
  let message: string | undefined;
  try {
    const body = JSON.parse(text) as CohereErrorBody | null;
    if (typeof body?.message === 'string' && body.message !== '') message = body.message;
  } catch {
    // not JSON (a proxy's HTML page, say): the text itself, shortened, is the best message there is
  }
  message ??= text.trim() === '' ? `cohere answered ${status} without a message` : text.trim().slice(0, 500);
  return new GatewayError(status, message);
}
