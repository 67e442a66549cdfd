/**
 * The query filters shared by /v1/logs and the group routes:
 * `start_time`, `end_time` (inclusive; ISO 8601 or Unix seconds),
 * `provider`, `model`, `trace_id`, `api_key_id`, `prompt_id`, `config_id`, `status` (comma-separated
 * codes or classes: `200,4xx`), metadata pairs as `metadata.<key>=value`
 * or `metadata={"key":"value"}` (every pair must match), and guardrail
 * verdicts: `hook_status` (comma-separated: `passed`, `failed` — a hook
 * failed without denying —, `denied`; requests without hooks have none) and
 * `guardrail_check` (a check id the request ran, e.g. `default.regexMatch`). `workspace_id` is
 * resolved with the caller's access (log-access.ts).
 */
import { invalid, type Result } from '../shared/errors.js';
import { HOOK_STATUSES, type HookStatus } from '../store/log-record.js';
import type { LogFilter } from '../store/logs.js';

/** The filters' parameters, as GET /logs and the group routes declare them (the router checks them; logFilter reads them). */
export const LOG_FILTER_PARAMS = {
  start_time: 'inclusive; ISO 8601 date-time or Unix seconds',
  end_time: 'inclusive; ISO 8601 date-time or Unix seconds',
  provider: 'provider name',
  model: 'model name',
  trace_id: 'trace id',
  api_key_id: 'gateway key id',
  status: 'comma-separated status codes or classes, e.g. 200,4xx',
  hook_status: `comma-separated guardrail verdicts: ${HOOK_STATUSES.join(', ')}`,
  guardrail_check: 'a check id the request ran, e.g. default.regexMatch',
  metadata: 'JSON object of string values; every pair must match (or metadata.<key>=value)',
  workspace_id: 'narrows to this workspace (id or slug)',
};

/** Spec limits of metadata: 16 pairs. */
const MAX_METADATA_PAIRS = 16;

/** ISO 8601: a date, or a date-time with optional seconds, fraction and offset (a `+` in a query arrives as a space). */
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[ +-]\d{2}:?\d{2})?)?$/i;
const UNIX_SECONDS = /^\d+(?:\.\d+)?$/;

function time(query: URLSearchParams, param: string): Result<number | undefined> {
  const raw = query.get(param);
  if (raw === null || raw === '') return { ok: true, value: undefined };
  if (UNIX_SECONDS.test(raw)) return { ok: true, value: Math.round(Number(raw) * 1000) };
  const ms = ISO.test(raw) ? Date.parse(raw.replace(/ (\d{2}:?\d{2})$/, '+$1')) : NaN;
  if (Number.isNaN(ms)) return { ok: false, error: invalid(`${param}: '${raw}' is neither an ISO 8601 date-time nor Unix seconds`, param) };
  return { ok: true, value: ms };
}

/** Each code and class once, and no code its class already takes: a list repeated to the URL's length is a short filter. */
function statuses(raw: string): Result<NonNullable<LogFilter['status']>> {
  const exact = new Set<number>();
  const classes = new Set<number>();
  for (const part of raw.split(',').map((s) => s.trim())) {
    if (/^[1-5]\d\d$/.test(part)) exact.add(Number(part));
    else if (/^[1-5]xx$/i.test(part)) classes.add(Number(part[0]));
    else return { ok: false, error: invalid(`status: '${part}' is neither a status code nor a class such as 4xx`, 'status') };
  }
  return { ok: true, value: { exact: [...exact].filter((code) => !classes.has(Math.floor(code / 100))), classes: [...classes] } };
}

function metadataPairs(query: URLSearchParams): Result<[string, string][]> {
  const pairs: [string, string][] = [];
  for (const [name, value] of query) {
    if (!name.startsWith('metadata.')) continue;
    const key = name.slice('metadata.'.length);
    if (key === '') return { ok: false, error: invalid(`${name}: name a metadata key after 'metadata.'`, name) };
    pairs.push([key, value]);
  }
  const json = query.get('metadata');
  if (json !== null && json !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      parsed = null;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
      return { ok: false, error: invalid('metadata: must be a JSON object of string values', 'metadata') };
    }
    pairs.push(...(Object.entries(parsed) as [string, string][]));
  }
  if (pairs.length > MAX_METADATA_PAIRS) return { ok: false, error: invalid(`metadata: at most ${MAX_METADATA_PAIRS} pairs`, 'metadata') };
  return { ok: true, value: pairs };
}

export function logFilter(query: URLSearchParams): Result<LogFilter> {
  const from = time(query, 'start_time');
  if (!from.ok) return from;
  const to = time(query, 'end_time');
  if (!to.ok) return to;
  if (from.value !== undefined && to.value !== undefined && from.value > to.value) {
    return { ok: false, error: invalid('end_time: must not be before start_time', 'end_time') };
  }
  const filter: LogFilter = { fromMs: from.value, toMs: to.value };
  const text = (param: string): string | undefined => {
    const v = query.get(param);
    return v === null || v === '' ? undefined : v;
  };
  filter.provider = text('provider');
  filter.model = text('model');
  filter.traceId = text('trace_id');
  filter.apiKeyId = text('api_key_id');
  filter.promptId = text('prompt_id');
  filter.configId = text('config_id');
  const status = text('status');
  if (status !== undefined) {
    const s = statuses(status);
    if (!s.ok) return s;
    filter.status = s.value;
  }
  const hookStatus = text('hook_status');
  if (hookStatus !== undefined) {
    const wanted = [...new Set(hookStatus.split(',').map((s) => s.trim()))];
    const bad = wanted.find((s) => !HOOK_STATUSES.includes(s as HookStatus));
    if (bad !== undefined) return { ok: false, error: invalid(`hook_status: '${bad}' is not one of ${HOOK_STATUSES.join(', ')}`, 'hook_status') };
    filter.hookStatus = wanted as HookStatus[];
  }
  filter.guardrailCheck = text('guardrail_check');
  const pairs = metadataPairs(query);
  if (!pairs.ok) return pairs;
  filter.metadata = pairs.value;
  return { ok: true, value: filter };
}
