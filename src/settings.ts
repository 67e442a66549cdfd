/**
 * Process settings from the environment (the contract's table), read once at
 * start. Bad values stop the process with a message naming the variable.
 */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';

export interface BatchSettings {
  /** Lines of one batch in flight at once. */
  concurrency: number;
  /** Batches one process runs at once. */
  maxRunning: number;
  /** How often a process looks for batches to run (or to take over from a process that died). */
  pollMs: number;
  /** How long a batch's lease lasts unless its runner renews it. */
  leaseMs: number;
  maxFileBytes: number;
  /**
   * Where the gateway's files are kept: every process of one database must see the same folder (a shared volume).
   * With s3, only files being written (scratch) are here, and the files are in the bucket.
   */
  filesDir: string;
  /** An S3-compatible bucket for the files (GATEWAY_FILES_S3_*); credentials from the AWS SDK's usual sources (AWS_ACCESS_KEY_ID, …). */
  s3?: S3Settings;
}

export interface S3Settings {
  bucket: string;
  /** GATEWAY_FILES_S3_REGION, else AWS_REGION. */
  region: string;
  /** An S3-compatible service's URL (MinIO, R2, …); AWS's own when absent. */
  endpoint?: string;
  /** Prepended to every object's key (the file id). */
  prefix: string;
  /** Bucket in the path, not the host name: default on with an endpoint (most S3-compatible services want it). */
  forcePathStyle: boolean;
}

export interface Settings {
  port: number;
  host: string;
  dataDir: string;
  /** Postgres connection string; unset: SQLite in dataDir. */
  databaseUrl: string | undefined;
  /**
   * DB_READER_HOST (_PORT, _USER, _PASS) over DATABASE_URL: a read replica's connection string, which log and
   * analytics reads use (and, in writer HA mode, every read while the writer is away); unset: the writer answers them.
   */
  databaseReaderUrl: string | undefined;
  /** DB_WRITER_HA: while the Postgres writer is away, reads go to the reader and writes answer 503 (docs/deploy.md). */
  writerHa: boolean;
  /** OIDC_CUSTOM_SCOPES: scopes beyond `openid` an identity provider configuration asks for (validated; docs/deploy.md). */
  oidcCustomScopes: string[];
  /** redis:// or rediss:// URL of shared counters, cache and circuit state; unset: process memory. */
  redisUrl: string | undefined;
  /** Prefix of every key the gateway writes in Redis, so deployments (or test runs) can share one server. */
  redisKeyPrefix: string;
  adminApiKey: string | undefined;
  /** GATEWAY_ENCRYPTION_KEY; unset: read from encryptionKeyFile, else a key generated into dataDir. */
  encryptionKey: string | undefined;
  /** GATEWAY_ENCRYPTION_KEY_FILE: the file holding the key (secret mounts); never set together with encryptionKey. */
  encryptionKeyFile: string | undefined;
  apiKeyPrefix: string;
  logLevel: string;
  maxBodyBytes: number;
  /** What one client may hold of the server: connections, and how long it may take to send a request. */
  connections: ConnectionLimits;
  /** How much of the providers one request may take: attempts and time (routing/router.ts). */
  routing: RoutingLimits;
  /** Gateway-managed batches and files (docs/batches.md). */
  batches: BatchSettings;
  /** Bounded wait for in-flight requests and streams on SIGTERM. */
  shutdownGraceMs: number;
  /** GATEWAY_WORKERS: processes serving the port (src/cluster, docs/workers.md); 1 keeps one process. */
  workers: number;
  /** Request logs older than this many days are deleted; 0 keeps them forever. */
  logRetentionDays: number;
  /** Log every request to a model endpoint or the proxy (GATEWAY_REQUEST_LOGS, default on). */
  requestLogs: boolean;
  /** Bodies the request log path holds in memory on their way to the store, past which logs are dropped and counted (docs/logs.md). */
  logQueueBytes: number;
  /** Vectors the semantic cache keeps per partition (the newest; a lookup compares against all of them). */
  semanticCacheEntries: number;
  /**
   * Rate-limit and usage-limit groups counted in process memory (GATEWAY_MAX_COUNTER_GROUPS; with REDIS_URL,
   * the rate leases held): past it the least recently used group is forgotten (limits/counter.ts).
   */
  maxCounterGroups: number;
  /** Where request spans are exported; undefined: nowhere (and OpenTelemetry is not loaded). */
  otlp: OtlpSettings | undefined;
  /** GATEWAY_UPSTREAM_DENY and GATEWAY_UPSTREAM_ALLOW; the built-in denials are upstream/policy.ts's. */
  upstream: UpstreamRules;
}

/** Where upstream calls may not and may go, as the operator wrote it (docs/security.md, "Where upstream calls may go"). */
export interface UpstreamRules {
  deny: AddressRule[];
  allow: AddressRule[];
}

/** One entry of GATEWAY_UPSTREAM_DENY or _ALLOW: an address range (a single address is a /32 or /128), or a host name. */
export type AddressRule =
  | { kind: 'range'; family: 'ipv4' | 'ipv6'; network: string; prefix: number; text: string }
  /** `subdomains`: written `*.name`, it matches every name under `name` (not `name` itself). */
  | { kind: 'host'; name: string; subdomains: boolean; text: string };

export interface ConnectionLimits {
  /** Open connections past which new ones are closed at once (GATEWAY_MAX_CONNECTIONS). */
  max: number;
  /** A request's head must arrive within this (GATEWAY_HEADERS_TIMEOUT_MS): a client trickling headers is cut off. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (GATEWAY_BODY_TIMEOUT_MS); the answer is not timed. */
  bodyTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (GATEWAY_KEEPALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
}

export interface RoutingLimits {
  /** Upstream calls one request may make, across retries and fallbacks at every depth (GATEWAY_MAX_ATTEMPTS). */
  maxAttempts: number;
  /**
   * From routing's start, how long one request may wait for answers and between retries
   * (GATEWAY_REQUEST_DEADLINE_MS); it caps every attempt's request_timeout. A stream that has begun is not timed.
   */
  deadlineMs: number;
}

/** OpenTelemetry's standard variables, as far as the gateway reads them itself (the exporter reads the rest). */
export interface OtlpSettings {
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL; the spec's default is http/protobuf. */
  protocol: 'http/protobuf' | 'http/json';
  /** OTEL_SERVICE_NAME, default switchyard. */
  serviceName: string;
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return {
    port: int(env, 'PORT', 8787, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir: resolve(env.GATEWAY_DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    databaseReaderUrl: readerUrl(env),
    writerHa: writerHa(env),
    oidcCustomScopes: scopes(env, 'OIDC_CUSTOM_SCOPES'),
    redisUrl: redisUrl(env.REDIS_URL),
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'switchyard:',
    adminApiKey: adminApiKey(env.GATEWAY_ADMIN_API_KEY),
    ...encryptionKey(env),
    apiKeyPrefix: env.API_KEY_PREFIX ?? '',
    logLevel: env.LOG_LEVEL || 'info',
    maxBodyBytes: int(env, 'GATEWAY_MAX_BODY_BYTES', 100 * 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
    connections: {
      max: int(env, 'GATEWAY_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
      headersTimeoutMs: int(env, 'GATEWAY_HEADERS_TIMEOUT_MS', 30_000, 100, 3_600_000),
      bodyTimeoutMs: int(env, 'GATEWAY_BODY_TIMEOUT_MS', 300_000, 100, 86_400_000),
      // Longer than the 60 s idle timeout of common load balancers, so they, not the gateway, close idle connections.
      keepAliveTimeoutMs: int(env, 'GATEWAY_KEEPALIVE_TIMEOUT_MS', 65_000, 100, 3_600_000),
    },
    routing: {
      maxAttempts: int(env, 'GATEWAY_MAX_ATTEMPTS', 10, 1, 1000),
      // As long as the OpenAI SDKs wait for an answer by default: a client still waiting is not cut short.
      deadlineMs: int(env, 'GATEWAY_REQUEST_DEADLINE_MS', 600_000, 1, 86_400_000),
    },
    shutdownGraceMs: int(env, 'GATEWAY_SHUTDOWN_GRACE_MS', 30_000, 0, 3_600_000),
    workers: workers(env),
    logRetentionDays: int(env, 'GATEWAY_LOG_RETENTION_DAYS', 30, 0, 36_500),
    requestLogs: onOff(env, 'GATEWAY_REQUEST_LOGS', true),
    logQueueBytes: int(env, 'GATEWAY_LOG_QUEUE_BYTES', DEFAULT_LOG_QUEUE_BYTES, 1024 * 1024, Number.MAX_SAFE_INTEGER),
    semanticCacheEntries: int(env, 'GATEWAY_SEMANTIC_CACHE_ENTRIES', 1000, 1, 100_000),
    // limits/counter.ts's MAX_MEMORY_COUNTERS: ~250 bytes a group, so 25 MB at most by default.
    maxCounterGroups: int(env, 'GATEWAY_MAX_COUNTER_GROUPS', 100_000, 100, 10_000_000),
    otlp: otlp(env),
    batches: {
      concurrency: int(env, 'GATEWAY_BATCH_CONCURRENCY', 32, 1, 1024),
      maxRunning: int(env, 'GATEWAY_BATCH_MAX_RUNNING', 4, 1, 256),
      pollMs: int(env, 'GATEWAY_BATCH_POLL_MS', 5_000, 10, 3_600_000),
      leaseMs: int(env, 'GATEWAY_BATCH_LEASE_MS', 30_000, 100, 3_600_000),
      maxFileBytes: int(env, 'GATEWAY_MAX_FILE_BYTES', 512 * 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
      filesDir: resolve(env.GATEWAY_FILES_DIR || join(resolve(env.GATEWAY_DATA_DIR || './data'), 'files')),
      ...s3(env),
    },
    upstream: { deny: addressRules(env, 'GATEWAY_UPSTREAM_DENY'), allow: addressRules(env, 'GATEWAY_UPSTREAM_ALLOW') },
  };
}

// S3's bucket naming rules: 3-63 of lowercase letters, digits, dots and hyphens, a letter or digit at each end.
/**
 * GATEWAY_LOG_QUEUE_BYTES's default: at 19 KB a body (an embedding's answer) some 800 logs, 50 ms of a
 * busy gateway's traffic; small bodies are bounded by their count first (logs/writer.ts).
 */
export const DEFAULT_LOG_QUEUE_BYTES = 16 * 1024 * 1024;

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** GATEWAY_FILES_S3_*: all or nothing, each one checked, so a typo stops the process rather than writing elsewhere. */
function s3(env: NodeJS.ProcessEnv): { s3?: S3Settings } {
  const bucket = env.GATEWAY_FILES_S3_BUCKET || undefined;
  if (bucket === undefined) {
    for (const name of ['GATEWAY_FILES_S3_ENDPOINT', 'GATEWAY_FILES_S3_REGION', 'GATEWAY_FILES_S3_PREFIX', 'GATEWAY_FILES_S3_FORCE_PATH_STYLE']) {
      if (env[name]) throw new Error(`${name} is set but GATEWAY_FILES_S3_BUCKET is not: set the bucket to keep files in S3`);
    }
    return {};
  }
  if (!BUCKET.test(bucket)) throw new Error(`GATEWAY_FILES_S3_BUCKET must be an S3 bucket name (3-63 lowercase letters, digits, dots, hyphens), got '${bucket}'`);
  const region = env.GATEWAY_FILES_S3_REGION || env.AWS_REGION || undefined;
  if (region === undefined) throw new Error('GATEWAY_FILES_S3_REGION (or AWS_REGION) is required with GATEWAY_FILES_S3_BUCKET');
  const endpoint = env.GATEWAY_FILES_S3_ENDPOINT || undefined;
  if (endpoint !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(endpoint);
    } catch {
      // reported below
    }
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new Error(`GATEWAY_FILES_S3_ENDPOINT must be an http(s) URL, got '${endpoint}'`);
  }
  const prefix = env.GATEWAY_FILES_S3_PREFIX ?? '';
  if (prefix.length > 512 || /[\x00-\x1f]/.test(prefix)) throw new Error('GATEWAY_FILES_S3_PREFIX must be at most 512 characters, without control characters');
  return { s3: { bucket, region, endpoint, prefix, forcePathStyle: onOff(env, 'GATEWAY_FILES_S3_FORCE_PATH_STYLE', endpoint !== undefined) } };
}

function addressRules(env: NodeJS.ProcessEnv, name: string): AddressRule[] {
  const rules: AddressRule[] = [];
  for (const raw of (env[name] ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const rule = parseAddressRule(entry);
    if (rule === null) {
      throw new Error(`${name}: '${entry}' is not a CIDR (10.0.0.0/8, fd00::/8), an IP address or a host name (models.internal, *.internal)`);
    }
    rules.push(rule);
  }
  return rules;
}

// A DNS label: letters, digits, hyphens inside, underscores (service names); IDNs come punycoded, as URLs carry them.
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
// A last label the WHATWG URL parser reads as a number, so a URL host ending so is an IPv4 address, never a name.
const NUMERIC = /^(?:[0-9]+|0x[0-9a-f]*)$/;

/** An entry of the upstream rules, or null when it is none of a CIDR, an address or a host name. */
export function parseAddressRule(entry: string): AddressRule | null {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family !== 0) {
    const max = family === 4 ? 32 : 128;
    const bits = slash === -1 ? String(max) : entry.slice(slash + 1);
    // No zone ids (fe80::1%eth0): a rule is about addresses, and URLs cannot carry zones.
    if (address.includes('%') || !/^[0-9]{1,3}$/.test(bits) || Number(bits) > max) return null;
    return { kind: 'range', family: family === 4 ? 'ipv4' : 'ipv6', network: address.toLowerCase(), prefix: Number(bits), text: entry };
  }
  if (slash !== -1) return null;
  const subdomains = entry.startsWith('*.');
  const name = (subdomains ? entry.slice(2) : entry).toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  if (name.length === 0 || name.length > 253 || !labels.every((l) => LABEL.test(l))) return null;
  // 2852039166 or 0x7f.1 is an IPv4 address in a URL: as an entry it must be written dotted-decimal.
  if (NUMERIC.test(labels[labels.length - 1]!)) return null;
  return { kind: 'host', name, subdomains, text: entry };
}

const READER_VARS = ['DB_READER_HOST', 'DB_READER_PORT', 'DB_READER_USER', 'DB_READER_PASS'] as const;

/**
 * The replica is the writer's database (DATABASE_URL's name and parameters) on another host; user and password are
 * the writer's unless DB_READER_USER is set (then DB_READER_PASS, or none). No URL or password is echoed in an error.
 */
function readerUrl(env: NodeJS.ProcessEnv): string | undefined {
  const set = READER_VARS.filter((name) => (env[name] ?? '') !== '');
  if (set.length === 0) return undefined;
  const host = env.DB_READER_HOST ?? '';
  if (host === '') throw new Error(`${set.join(', ')} set without DB_READER_HOST: the read replica needs a host`);
  const writer = env.DATABASE_URL || undefined;
  if (writer === undefined) throw new Error('DB_READER_HOST needs DATABASE_URL: the reader is a Postgres replica of that database');
  const u = URL.canParse(writer) ? new URL(writer) : null;
  if (u === null || (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')) {
    throw new Error('DB_READER_HOST needs DATABASE_URL to be a postgres:// URL (the reader takes its database name from it)');
  }
  const family = isIP(host);
  const rule = family === 0 ? parseAddressRule(host) : null;
  if (family === 0 && (rule?.kind !== 'host' || rule.subdomains)) throw new Error(`DB_READER_HOST must be a host name or an IP address, got '${host}'`);
  u.hostname = family === 6 ? `[${host}]` : host;
  u.port = String(int(env, 'DB_READER_PORT', Number(u.port || 5432), 1, 65535));
  if (env.DB_READER_USER) {
    u.username = env.DB_READER_USER;
    u.password = env.DB_READER_PASS ?? '';
  } else if (env.DB_READER_PASS) {
    u.password = env.DB_READER_PASS;
  }
  // Named in pg_stat_activity on the replica, so its sessions are told from the writer's.
  if (!u.searchParams.has('application_name')) u.searchParams.set('application_name', 'switchyard-reader');
  return u.toString();
}

function writerHa(env: NodeJS.ProcessEnv): boolean {
  const on = onOff(env, 'DB_WRITER_HA', false);
  if (on && !env.DATABASE_URL) throw new Error('DB_WRITER_HA=on needs DATABASE_URL: the writer it stands in for is a Postgres server');
  return on;
}

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), so no space, quote or backslash.
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/;

function scopes(env: NodeJS.ProcessEnv, name: string): string[] {
  const raw = env[name] ?? '';
  if (raw.trim() === '') return [];
  const out: string[] = [];
  for (const part of raw.split(',')) {
    const scope = part.trim();
    if (!SCOPE_TOKEN.test(scope)) {
      throw new Error(`${name}: '${scope}' is not an OAuth scope (1 to 200 printable ASCII characters, no space, quote or backslash; entries separated by commas)`);
    }
    if (out.includes(scope)) throw new Error(`${name}: '${scope}' is listed twice`);
    out.push(scope);
  }
  return out;
}

/** Tracing is on when an OTLP endpoint is set, unless OTEL_SDK_DISABLED says otherwise. */
function otlp(env: NodeJS.ProcessEnv): OtlpSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  if (traces === undefined && base === undefined) return undefined;
  const name = traces !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  // The signal path is appended to the generic endpoint only (OTLP exporter spec).
  const tracesUrl = traces ?? `${base!}${base!.endsWith('/') ? '' : '/'}v1/traces`;
  const protocol = URL.canParse(tracesUrl) ? new URL(tracesUrl).protocol : null;
  if (protocol !== 'http:' && protocol !== 'https:') throw new Error(`${name} must be an http:// or https:// URL`);
  const wireName = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const wire = env[wireName] || 'http/protobuf';
  if (wire !== 'http/protobuf' && wire !== 'http/json') {
    throw new Error(`${wireName} must be http/protobuf or http/json (grpc is not supported), got '${wire}'`);
  }
  return { tracesUrl, protocol: wire, serviceName: env.OTEL_SERVICE_NAME || 'switchyard' };
}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got '${raw}'`);
  }
  return n;
}

/** `auto` (the default): one per core this process may use. */
function workers(env: NodeJS.ProcessEnv): number {
  const raw = env.GATEWAY_WORKERS;
  if (raw === undefined || raw === '' || raw === 'auto') return availableParallelism();
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_WORKERS) throw new Error(`GATEWAY_WORKERS must be auto or an integer between 1 and ${MAX_WORKERS}, got '${raw}'`);
  return Number(raw);
}

const MAX_WORKERS = 256;

function onOff(env: NodeJS.ProcessEnv, name: string, dflt: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (raw === 'on' || raw === 'true' || raw === '1') return true;
  if (raw === 'off' || raw === 'false' || raw === '0') return false;
  throw new Error(`${name} must be on or off, got '${raw}'`);
}

/** The key, or the file holding it: one place says it, so no process starts with the other by mistake. */
function encryptionKey(env: NodeJS.ProcessEnv): Pick<Settings, 'encryptionKey' | 'encryptionKeyFile'> {
  const key = env.GATEWAY_ENCRYPTION_KEY || undefined;
  const file = env.GATEWAY_ENCRYPTION_KEY_FILE || undefined;
  if (key !== undefined && file !== undefined) throw new Error('set GATEWAY_ENCRYPTION_KEY or GATEWAY_ENCRYPTION_KEY_FILE, not both');
  return { encryptionKey: key, encryptionKeyFile: file === undefined ? undefined : resolve(file) };
}

/** Shortest GATEWAY_ADMIN_API_KEY taken: it holds every scope, so it must resist guessing (as generated keys do). */
export const MIN_ADMIN_KEY_LENGTH = 32;

/** The key is not echoed in the error. */
function adminApiKey(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < MIN_ADMIN_KEY_LENGTH) {
    throw new Error(
      `GATEWAY_ADMIN_API_KEY must be at least ${MIN_ADMIN_KEY_LENGTH} characters (it has ${raw.length}): it is the organisation admin key. ` +
        'Generate one, e.g. `openssl rand -hex 32`, or unset it to have one generated and printed at first start.',
    );
  }
  return raw;
}

/** The URL is not echoed in the error: it may hold a password. */
function redisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const protocol = URL.canParse(raw) ? new URL(raw).protocol : null;
  if (protocol !== 'redis:' && protocol !== 'rediss:') throw new Error('REDIS_URL must be a redis:// or rediss:// URL');
  return raw;
}
