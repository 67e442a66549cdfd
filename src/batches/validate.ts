/**
 * One line of a batch's input file checked as OpenAI's Batch API checks it:
 * a JSON object with a `custom_id` unique in the file, `method` POST, the
 * batch's own `url`, and a `body` object that does not stream. A bad line
 * becomes an entry of the batch's `errors.data`, numbered from 1 as an
 * editor does.
 */
import type { BatchLineError } from '../store/batches.js';
import type { JsonlLine } from './jsonl.js';

/** The most lines one batch holds (OpenAI's limit). */
export const MAX_BATCH_LINES = 50_000;
/** The most line errors a failed batch lists. */
export const MAX_LINE_ERRORS = 1000;

export interface BatchLine {
  customId: string;
  body: Record<string, unknown>;
}

const lineError = (line: number, code: string, message: string, param: string | null): BatchLineError => ({ line: line + 1, code, message, param });

/** `text` (null: over the size limit) of 0-based line `line` → the request it asks for, or why not. */
export function checkLine(text: string | null, line: number, url: string, maxBytes: number): BatchLine | BatchLineError {
  if (text === null) return lineError(line, 'request_too_large', `line is longer than ${maxBytes} bytes`, null);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return lineError(line, 'invalid_json_line', `line is not valid JSON: ${(e as Error).message}`, null);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return lineError(line, 'invalid_request', 'line must be a JSON object', null);
  const o = v as Record<string, unknown>;
  if (typeof o.custom_id !== 'string' || o.custom_id === '') return lineError(line, 'missing_required_parameter', 'custom_id: must be a non-empty string', 'custom_id');
  if (o.custom_id.length > 512) return lineError(line, 'invalid_value', 'custom_id: at most 512 characters', 'custom_id');
  if (o.method !== 'POST') return lineError(line, 'invalid_method', "method: must be 'POST'", 'method');
  if (o.url !== url) return lineError(line, 'mismatched_url', `url: must be the batch's endpoint '${url}'`, 'url');
  if (typeof o.body !== 'object' || o.body === null || Array.isArray(o.body)) return lineError(line, 'invalid_request', 'body: must be a JSON object', 'body');
  const body = o.body as Record<string, unknown>;
  if (body.stream === true) return lineError(line, 'invalid_value', 'body.stream: a batch line cannot stream', 'body.stream');
  return { customId: o.custom_id, body };
}

export function isLineError(x: BatchLine | BatchLineError): x is BatchLineError {
  return 'code' in x;
}

/**
 * A whole input file's lines checked as one batch: each line (checkLine), its
 * custom_id unique, at most MAX_BATCH_LINES lines, not empty; `more` adds a
 * runner's own check of a good line (a Bedrock batch's one model, its
 * translation). Blank lines are skipped. Errors are listed up to
 * MAX_LINE_ERRORS, plus the one saying the file is too long or empty.
 */
export async function checkLines(
  lines: AsyncIterable<JsonlLine>,
  url: string,
  maxBytes: number,
  more?: (line: BatchLine, at: number) => Promise<BatchLineError | null>,
): Promise<{ errors: BatchLineError[]; total: number }> {
  const errors: BatchLineError[] = [];
  const seen = new Set<string>();
  let total = 0;
  for await (const l of lines) {
    if (l.text !== null && l.text.trim() === '') continue;
    if (++total > MAX_BATCH_LINES) {
      errors.push(lineError(l.line, 'too_many_lines', `a batch holds at most ${MAX_BATCH_LINES} lines`, null));
      break;
    }
    const c = checkLine(l.text, l.line, url, maxBytes);
    let error: BatchLineError | null;
    if (isLineError(c)) error = c;
    else if (seen.has(c.customId)) error = lineError(l.line, 'duplicate_custom_id', `custom_id '${c.customId}' is used by an earlier line`, 'custom_id');
    else {
      seen.add(c.customId);
      error = more === undefined ? null : await more(c, l.line);
    }
    if (error !== null && errors.length < MAX_LINE_ERRORS) errors.push(error);
  }
  if (total === 0) errors.push({ code: 'empty_file', message: 'the input file has no lines', param: 'input_file_id', line: null });
  return { errors, total };
}
