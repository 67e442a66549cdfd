/**
 * OpenAI tool-call ids for Gemini function calls. Gemini's calls carry no id
 * (responses are matched to calls by name and order), but a thinking model's
 * call may carry a `thoughtSignature` that must come back with that call in
 * the next turn (Gemini 3 refuses the request otherwise:
 * https://ai.google.dev/gemini-api/docs/thought-signatures). OpenAI clients
 * send back only the id, so the signature rides inside it:
 * `call_<hex>_ts_<signature as base64url>`. Every character stays in
 * [A-Za-z0-9_-], so the id is also valid for providers that restrict ids
 * (a fallback to Anthropic, say).
 */
import { randomBytes } from 'node:crypto';

const MARK = '_ts_';

export function toolCallId(signature: string | undefined): string {
  const id = `call_${randomBytes(12).toString('hex')}`;
  return signature === undefined ? id : id + MARK + Buffer.from(signature, 'base64').toString('base64url');
}

/** The thought signature an id carries, in the standard base64 Gemini sent it in; undefined if none. */
export function signatureOf(id: string): string | undefined {
  const at = id.indexOf(MARK);
  if (at === -1) return undefined;
  return Buffer.from(id.slice(at + MARK.length), 'base64url').toString('base64');
}
