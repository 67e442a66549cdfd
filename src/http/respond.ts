/** Writing the gateway's own answers: JSON bodies and the error envelope. */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../shared/errors.js';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  if (headers !== undefined) for (const k in headers) res.setHeader(k, headers[k]!);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The envelope, with `extra` fields beside `error` (a guardrail's hook_results). */
export function sendError(res: ServerResponse, error: GatewayError, extra?: Record<string, unknown>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, extra === undefined ? error.toJSON() : { ...error.toJSON(), ...extra }, error.headers);
}

/** An envelope written straight to a socket, for requests Node could not parse. */
export function rawErrorResponse(status: number, statusText: string, error: GatewayError): string {
  const body = JSON.stringify(error.toJSON());
  return `HTTP/1.1 ${status} ${statusText}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}
