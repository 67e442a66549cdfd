/**
 * Composition root: builds the store, auth, router and server from settings.
 * main.ts runs it as a process (or, with GATEWAY_WORKERS, as each worker of
 * src/cluster); tests start it in-process on port 0.
 */
import { mkdirSync } from 'node:fs';
import type { AddressInfo, LookupFunction } from 'node:net';
import { dirname } from 'node:path';
import { pino, type Logger } from 'pino';
import { KeyRotationSweep } from './admin/key-rotation-sweep.js';
import { ADMIN_ROUTES } from './admin/routes.js';
import { StoredResponses } from './admin/responses.js';
import { Jobs } from './batches/api.js';
import { BedrockBatches } from './batches/bedrock-batches.js';
import { BatchEngine } from './batches/engine.js';
import { Files } from './batches/files.js';
import { DiskStorage } from './batches/storage.js';
import { AnswerCache } from './cache/answer-cache.js';
import { RouterEmbedder } from './cache/embedder.js';
import { SemanticCache } from './cache/semantic.js';
import { MemorySemanticIndex, type SemanticIndex } from './cache/semantic-index.js';
import { MemoryCacheStore, type CacheStore } from './cache/store.js';
import { AdminRouter, type AdminDeps } from './admin/router.js';
import { MemoryBudgetCounter, type BudgetCounter } from './limits/budget-counter.js';
import { BudgetLimiter } from './limits/budgets.js';
import { MemoryRateCounter, type RateCounter } from './limits/counter.js';
import { RateLimiter } from './limits/limiter.js';
import { PolicyCache, type PolicySource } from './limits/policy-cache.js';
import { redactText } from './logs/redact.js';
import { LogRetention } from './logs/retention.js';
import { LogWriter, type LogSink } from './logs/writer.js';
import { MemoryCircuitStore, type CircuitStore } from './routing/circuit.js';
import { Router } from './routing/router.js';
import { ensureBootstrapKey, KeyAuthenticator } from './http/auth.js';
import { CredentialCache } from './routing/credential-cache.js';
import { createGatewayServer } from './http/server.js';
import { LogBodies } from './logs/log-bodies.js';
import { Metrics } from './metrics/metrics.js';
import { SavedGuardrails } from './guardrails/saved.js';
import { inputGuardrails, outputGuardrails } from './pipeline/guardrails.js';
import { RequestLimits } from './pipeline/limits.js';
import { openApiDocument } from './openapi/document.js';
import { Pipeline, requestPath } from './pipeline/pipeline.js';
import { Recorder, RequestLogger } from './pipeline/record.js';
import { SavedConfigs } from './pipeline/saved-configs.js';
import { SavedPrompts } from './pipeline/saved-prompts.js';
import { savedGuardrails } from './pipeline/saved-guardrails.js';
import type { Settings } from './settings.js';
import { VERSION } from './shared/version.js';
import { closeInTurn } from './shared/close.js';
import type { RedisStatus, SharedRedis } from './state/redis.js';
import { openStore } from './store/open.js';
import { openSecrets } from './store/key-setup.js';
import { readKeySource, type Secrets } from './store/secrets.js';
import type { Changes } from './store/changes.js';
import type { Store } from './store/store.js';
import { startTracer } from './tracing/start.js';
import type { UsageLimitPolicy } from './store/usage-limit-policies.js';
import { closeUpstreams, policeUpstreams } from './upstream/client.js';
import { UpstreamPolicy } from './upstream/policy.js';

export interface Gateway {
  url: string;
  store: Store;
  /** Runs the scheduled key rotation now (it runs at start and every minute anyway); resolves to the keys this process rotated. */
  rotateDueKeys(): Promise<number>;
  /** Graceful: stop accepting, finish in-flight work within the grace period, release everything. */
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  /** Wall clock in ms for circuit cooldowns, key expiry and rotation transitions (tests move it). */
  now?: () => number;
  /** DNS for upstream calls (default dns.lookup): tests answer it themselves, so no name they use leaves the machine. */
  lookup?: LookupFunction;
  /** Set in a worker of a cluster (src/cluster): what its primary does for every worker. */
  worker?: WorkerParts;
}

/**
 * A worker's parts that its primary serves: the primary has run the
 * migrations, made the default workspace and the bootstrap key, and runs log
 * retention; it holds the log writer, and without REDIS_URL the shared state.
 */
export interface WorkerParts {
  /** Null when request logs are off. */
  logs: LogSink | null;
  /** /metrics: every worker's series, summed by the primary. */
  scrape(metrics: Metrics): () => Promise<{ contentType: string; text: string }>;
  /** The store's change notices: relayed to and from the other workers through the primary. */
  changes(changes: Changes): void;
  /** Without REDIS_URL: counters, circuits and cache the primary holds for every worker. */
  shared(metrics: Metrics): SharedState;
}

/**
 * Opens the store ready for the gateway: migrated, secrets readable (and
 * re-encrypted in this release's format), the default workspace and the
 * bootstrap admin key made. A cluster's worker (`ready`) only opens it and
 * its secrets: its primary did the rest once.
 */
export async function openReadyStore(settings: Settings, logger: Logger, ready = false): Promise<{ store: Store; secrets: Secrets }> {
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const store = await openStore(settings);
  let secrets: Secrets;
  let generated: string | null = null;
  try {
    if (!ready) await store.migrate();
    const key = readKeySource(settings.encryptionKey, settings.encryptionKeyFile, settings.dataDir);
    if (!ready && key.file !== null && store.db.engine === 'sqlite' && dirname(key.file) === settings.dataDir) {
      logger.warn(
        { keyFile: key.file, dataDir: settings.dataDir },
        'the encryption key is in the same directory as the SQLite database: a copy of that directory holds both the stored credentials and their key. ' +
          'Keep the key elsewhere (GATEWAY_ENCRYPTION_KEY or GATEWAY_ENCRYPTION_KEY_FILE)',
      );
    }
    const opened = await openSecrets(key, store.db);
    secrets = opened.secrets;
    if (opened.rewrapped !== null) {
      // Row names only: never a secret.
      logger.warn(
        { blobs: opened.rewrapped.blobs, unreadable: opened.rewrapped.unreadable },
        "stored secrets re-encrypted in this release's format (scrypt-stretched passphrase, config secrets bound to their config); processes of earlier releases no longer start on this database",
      );
    }
    if (!ready) {
      await store.workspaces.default();
      generated = await ensureBootstrapKey(store, settings.adminApiKey, settings.apiKeyPrefix);
    }
  } catch (e) {
    await store.close().catch(() => {});
    throw e;
  }
  if (generated !== null) {
    // Printed once, never logged: the store keeps only its hash.
    process.stdout.write(`Generated organisation admin key (shown once, store it now): ${generated}\n`);
  }
  return { store, secrets };
}

/** The request logs' writer (null when they are off) and their retention: a cluster's primary runs one of each for every worker. */
export function requestLogs(
  settings: Settings,
  store: Store,
  logger: Logger,
  now: () => number,
  onUsage: (provider: string, model: string, input: number, output: number, cost: number) => void,
): { writer: LogWriter | null; retention: LogRetention } {
  const writer = settings.requestLogs
    ? new LogWriter({ dataDir: settings.dataDir, databaseUrl: settings.databaseUrl, maxBytes: settings.logQueueBytes, onError: (err, message) => logger.error({ err }, message), onUsage })
    : null;
  const retention = new LogRetention(store.logs, settings.logRetentionDays, now, (err) => logger.error({ err }, 'log retention failed'));
  retention.start();
  return { writer, retention };
}

export async function startGateway(settings: Settings, opts: GatewayOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? pino({ level: settings.logLevel });
  policeUpstreams(new UpstreamPolicy(settings.upstream), opts.lookup);
  const { store, secrets } = await openReadyStore(settings, logger, opts.worker !== undefined);
  opts.worker?.changes(store.changes);
  const now = opts.now ?? Date.now;
  const adminDeps: AdminDeps = { store, now, apiKeyPrefix: settings.apiKeyPrefix, secrets };
  const metrics = new Metrics();
  const shared = opts.worker !== undefined && settings.redisUrl === undefined ? opts.worker.shared(metrics) : await sharedState(settings, metrics, logger);
  const policies = new PolicyCache(store, now);
  const limiter = new RateLimiter({
    counter: shared.counter,
    policies: (workspaceId) => policies.forWorkspace(workspaceId),
    onUnavailable: shared.onUnavailable('rate_limit'),
    onUncounted: (outcome) => metrics.limitsUncounted.labels({ kind: 'rate_limit', outcome }).inc(),
  });
  const budgetPolicies = new PolicyCache(store, now, USAGE_LIMIT_POLICIES);
  const budgets = new BudgetLimiter({
    counter: shared.budgets,
    policies: (workspaceId) => budgetPolicies.forWorkspace(workspaceId),
    repo: store.usageLimitPolicies,
    onUnavailable: shared.onUnavailable('usage_limit'),
    onUncounted: (outcome) => metrics.limitsUncounted.labels({ kind: 'usage_limit', outcome }).inc(),
  });
  const onUsage = (provider: string, model: string, input: number, output: number, cost: number): void => metrics.usage(provider, model, input, output, cost);
  // A worker's logs and their retention are its primary's.
  const logs = opts.worker === undefined ? requestLogs(settings, store, logger, now, onUsage) : { writer: opts.worker.logs, retention: null };
  const logWriter = logs.writer;
  // Logs off: the log metrics stay, at zero.
  const noLogs = { depth: 0, bytes: 0, flushed: 0, spilled: 0, replayed: 0, dropped: 0, storeDown: false };
  metrics.watchLogQueue(() => logWriter?.stats() ?? noLogs);
  const tracer = await startTracer(settings.otlp, (err) => logger.warn({ err }, 'could not export trace spans'));
  const credentials = new CredentialCache(store, secrets, now, (what, id) =>
    logger.error({ id }, `stored credentials of ${what} do not decrypt: was the row altered, or GATEWAY_ENCRYPTION_KEY changed?`),
  );
  const router = new Router({
    circuits: shared.circuits,
    now,
    credentials,
    limits: settings.routing,
    onCircuit: (key, state) => metrics.circuit(key, state),
  });
  const semantic = new SemanticCache(new RouterEmbedder(router), shared.semanticIndex, shared.cache, (config, error, first) => {
    metrics.embeddingFailures.inc();
    // The reason may quote the provider's answer: credential-shaped strings are cut from it.
    if (first) logger.warn({ config, code: error.code, reason: redactText(error.message) }, 'semantic cache: embedding failed, requests of this config miss until it works');
  });
  const onError = (err: unknown): void => logger.error({ err }, 'unhandled error in request');
  const configs = new SavedConfigs(store, secrets, now);
  const pipeline = new Pipeline(
    requestPath({
      limits: new RequestLimits(limiter, budgets, now),
      configs,
      prompts: new SavedPrompts(store, { onEvict: metrics.evicted('saved_prompts') }),
      maxBodyBytes: settings.maxBodyBytes,
      cache: new AnswerCache(shared.cache, semantic, now),
      router,
      credentials,
      logging: logWriter !== null,
      responses: store.responses,
      onStoreError: (err) => logger.error({ err }, 'a response could not be stored'),
      beforeHooks: [savedGuardrails(new SavedGuardrails(store, { onEvict: metrics.evicted('saved_guardrails') })), inputGuardrails(credentials)],
      afterHooks: [outputGuardrails(credentials)],
    }),
    new Recorder(metrics, logWriter === null ? null : new RequestLogger(logWriter, new LogBodies(store), now)),
    tracer,
    onError,
  );
  const s3 = settings.batches.s3;
  // The AWS SDK (some megabytes of heap) loads only when files go to S3.
  const storage = s3 === undefined ? new DiskStorage(settings.batches.filesDir) : new (await import('./batches/s3-storage.js')).S3Storage(s3, settings.batches.filesDir);
  await storage.init();
  const files = new Files(store.files, storage);
  const bedrock = new BedrockBatches({ files, batches: store.batches, credentials, now, maxLineBytes: settings.maxBodyBytes, onS3ClientEvict: metrics.evicted('s3_clients') });
  const engine = new BatchEngine(
    store.batches,
    {
      files,
      models: pipeline,
      key: async (id) => {
        const k = await store.apiKeys.get(id);
        return k !== null && k.status === 'active' && (k.expiresAt === null || k.expiresAt * 1000 > now()) ? k : null;
      },
      now,
      maxLineBytes: settings.maxBodyBytes,
      maxAnswerBytes: settings.maxBodyBytes,
      collector: bedrock,
    },
    settings.batches,
    (err) => logger.error({ err }, 'a batch runner failed'),
  );
  // Made on first request, once: most processes are never asked.
  let openapi: string | undefined;
  const { server, drain } = createGatewayServer({
    limits: settings.connections,
    auth: new KeyAuthenticator(store, now),
    admin: new AdminRouter(ADMIN_ROUTES, adminDeps),
    responses: new StoredResponses(store.responses),
    jobs: new Jobs({
      files,
      bedrock,
      batches: store.batches,
      engine,
      virtualKeys: store.virtualKeys,
      models: pipeline,
      credentials,
      now,
      maxFileBytes: settings.batches.maxFileBytes,
      maxLineBytes: settings.maxBodyBytes,
    }),
    models: pipeline,
    healthy: async () => (await Promise.all([store.ping(), shared.redis?.ping() ?? true])).every(Boolean),
    metrics: opts.worker?.scrape(metrics) ?? (async () => ({ contentType: metrics.registry.contentType, text: await metrics.registry.metrics() })),
    openapi: () => (openapi ??= JSON.stringify(openApiDocument({ version: VERSION, adminRoutes: ADMIN_ROUTES }))),
    onError,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.port, settings.host, () => resolve());
    });
  } catch (e) {
    // The listen's failure is what is said; a close that fails too is not.
    await closeInTurn([() => logs.retention?.stop(), () => logWriter?.close(), () => tracer.close(), () => shared.redis?.close(), () => store.close()]).catch(() => {});
    throw e;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  logger.info({ url }, 'switchyard listening');
  const sweep = new KeyRotationSweep({ store, secrets, now, apiKeyPrefix: settings.apiKeyPrefix }, (err) =>
    logger.error({ err }, 'scheduled key rotation failed'),
  );
  sweep.start();
  engine.start();

  return {
    url,
    store,
    rotateDueKeys: () => sweep.run(),
    // Each step runs even when one before it failed: a writer that cannot flush still leaves Redis and the store closed.
    close: () =>
      closeInTurn([
        // First: the lines in flight finish through the pipeline and are recorded, the leases go back.
        () => engine.close(),
        () => drain(settings.shutdownGraceMs),
        // After the drain and the engine: no batch call uses its S3 clients any more.
        () => bedrock.close(),
        () => sweep.stop(),
        () => closeUpstreams().catch(() => {}),
        // After the drain, so every request's span has ended; spans still buffered are exported now.
        () => tracer.close().catch((err: unknown) => logger.warn({ err }, 'could not export trace spans')),
        // After the drain: answers finishing during it still charge their usage and are logged.
        () => logs.retention?.stop(),
        () => logWriter?.close(),
        () => shared.counter.close(),
        () => shared.redis?.close(),
        () => store.close(),
      ]),
  };
}

const USAGE_LIMIT_POLICIES: PolicySource<UsageLimitPolicy> = { kind: 'usage_limit_policy', active: (s, ws) => s.usageLimitPolicies.active(ws) };

export interface SharedState {
  /** Null without REDIS_URL. */
  redis: SharedRedis | null;
  counter: RateCounter;
  budgets: BudgetCounter;
  circuits: CircuitStore;
  cache: CacheStore;
  semanticIndex: SemanticIndex;
  /** Counts a failed Redis command of `component` (the callers fall back, or decide by the policies' fail_mode). */
  onUnavailable(component: string): (err: unknown) => void;
}

/** Bytes of answers the in-process cache holds before evicting the least recently used. */
export const MEMORY_CACHE_BYTES = 256 * 1024 * 1024;
/** Bytes of semantic cache vectors in process memory (the index, or with Redis the process's mirror of it): some 10 000 of 1536 dimensions. */
export const MEMORY_SEMANTIC_BYTES = 64 * 1024 * 1024;

/**
 * Rate counters, circuits, cached answers and the semantic index in Redis when REDIS_URL is set, else in this
 * process. The Redis modules (and ioredis) load only when chosen, as the
 * database drivers do: a process without Redis does not carry them.
 */
async function sharedState(settings: Settings, metrics: Metrics, logger: Logger): Promise<SharedState> {
  const vectors = new MemorySemanticIndex(MEMORY_SEMANTIC_BYTES, settings.semanticCacheEntries);
  if (settings.redisUrl === undefined) {
    return {
      redis: null,
      counter: new MemoryRateCounter({ max: settings.maxCounterGroups, onEvict: metrics.evicted('rate_counters') }),
      budgets: new MemoryBudgetCounter({ max: settings.maxCounterGroups, onEvict: metrics.evicted('budget_counters') }),
      circuits: new MemoryCircuitStore({ onEvict: metrics.evicted('circuits') }),
      cache: new MemoryCacheStore(MEMORY_CACHE_BYTES),
      semanticIndex: vectors,
      onUnavailable: () => () => {},
    };
  }
  const [{ SharedRedis }, { RedisRateCounter }, { RedisBudgetCounter }, { RedisCircuitStore }, { RedisCacheStore }, { RedisSemanticIndex }] = await Promise.all([
    import('./state/redis.js'),
    import('./limits/redis-counter.js'),
    import('./limits/budget-redis.js'),
    import('./routing/circuit-redis.js'),
    import('./cache/redis-store.js'),
    import('./cache/redis-semantic-index.js'),
  ]);
  const told = (status: RedisStatus): void =>
    status === 'up' ? logger.info('redis connected') : logger.warn('redis unreachable: rate and usage limits admit uncounted unless a policy fails closed, circuits are kept per process, the cache misses');
  const redis = new SharedRedis(settings.redisUrl, { onStatus: told });
  // Never throws: without Redis the gateway serves, degraded, and connects when Redis comes up.
  await redis.start();
  if (redis.status() === 'down') told('down');
  metrics.watchRedis(() => redis.status() === 'up');
  const onUnavailable = (component: string) => {
    const errors = metrics.redisErrors.labels({ component });
    return () => errors.inc();
  };
  const prefix = settings.redisKeyPrefix;
  return {
    redis,
    counter: new RedisRateCounter(redis.client, `${prefix}rate:`, { max: settings.maxCounterGroups, onEvict: metrics.evicted('rate_leases') }),
    budgets: new RedisBudgetCounter(redis.client, `${prefix}budget:`),
    circuits: new RedisCircuitStore(redis.client, {
      prefix: `${prefix}circuit:`,
      onUnavailable: onUnavailable('circuit'),
      fallback: new MemoryCircuitStore({ onEvict: metrics.evicted('circuits') }),
    }),
    cache: new RedisCacheStore(redis.client, `${prefix}cache:`, onUnavailable('cache')),
    semanticIndex: new RedisSemanticIndex(redis.client, `${prefix}semantic:`, vectors, onUnavailable('cache')),
    onUnavailable,
  };
}
