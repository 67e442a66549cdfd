/**
 * The primary process of a cluster (GATEWAY_WORKERS > 1). It serves no
 * request itself. Once, before any worker starts: migrations, secrets in
 * this release's format, the default workspace and the bootstrap key
 * (gateway.ts openReadyStore). Then, for every worker: the log writer
 * thread (workers send their entries: log-forwarder.ts) and log retention,
 * and without REDIS_URL the shared state (primary-state.ts). node:cluster
 * shares the port: the primary accepts connections and hands them to the
 * workers in turn (its default on Linux; NODE_CLUSTER_SCHED_POLICY=none
 * leaves it to the kernel).
 *
 * A worker that dies is replaced (its in-flight requests are lost with it,
 * no others); one that dies young is replaced after a delay that doubles,
 * so a worker that cannot start does not spin. SIGTERM or SIGINT drains
 * every worker (each finishes its in-flight requests within the grace
 * period), then the log writer flushes and the process exits.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { openReadyStore, requestLogs } from '../gateway.js';
import { Metrics } from '../metrics/metrics.js';
import type { Settings } from '../settings.js';
import { ChangeSender, isChange } from './change-relay.js';
import { MetricsGatherer } from './metrics-gather.js';
import { isOurs, type ToPrimary, type ToWorker } from './messages.js';
import { PrimaryState } from './primary-state.js';

/** A worker that lived less than this died young: its replacement waits. */
const YOUNG_MS = 10_000;
const MAX_RESTART_DELAY_MS = 10_000;
/** Past the grace period, what a worker's close still does (tracer, log batch, leases back) gets this long before SIGKILL. */
const CLOSE_MARGIN_MS = 15_000;

export async function runPrimary(settings: Settings, logger: Logger): Promise<void> {
  const { store } = await openReadyStore(settings, logger);
  // What the primary itself counts (the writer's records and usage, the shared state's evictions): part of every
  // scrape's sum, so it neither goes with a worker that dies nor is missing from /metrics.
  const metrics = new Metrics();
  const evicted = { rate: metrics.evicted('rate_counters'), budget: metrics.evicted('budget_counters'), circuit: metrics.evicted('circuits') };
  const state = settings.redisUrl === undefined ? new PrimaryState(settings, (kind, key) => evicted[kind](key)) : null;
  const live = new Set<Worker>();
  // Each worker's store changes, for every other worker (change-relay.ts).
  const relays = new Map<Worker, ChangeSender>();
  const logs = requestLogs(settings, store, logger, Date.now, (...row) => metrics.usage(...row));
  const writer = logs.writer;
  if (writer !== null) metrics.watchLogQueue(() => writer.stats());

  const gatherer = new MetricsGatherer(() => metrics.registry.getMetricsAsJSON());

  cluster.setupPrimary({ serialization: 'advanced' });
  cluster.on('message', (worker, m: unknown) => {
    if (!isOurs<ToPrimary>(m)) return;
    if (m.sy === 'logs') return logs.writer?.writeBatch(m.batch);
    if (m.sy === 'change') {
      if (!isChange(m.change)) return;
      for (const [w, relay] of relays) if (w !== worker) relay.send(m.change);
      return;
    }
    if (m.sy === 'gathered') return gatherer.answered(m.id, m.series);
    const reply = (r: ToWorker): void => void (worker.isConnected() && worker.send(r));
    if (m.op === 'metrics') {
      const id = m.id;
      return void gatherer.scrape(live).then(
        (value) => reply({ sy: 'reply', id, ok: true, value }),
        (err: unknown) => reply({ sy: 'reply', id, ok: false, message: (err as Error).message }),
      );
    }
    if (state === null) return reply({ sy: 'reply', id: m.id, ok: false, message: 'no shared state here: REDIS_URL is set' });
    state.run(m.op, m.args).then(
      (value) => reply({ sy: 'reply', id: m.id, ok: true, value: value ?? null }),
      (err: unknown) => reply({ sy: 'reply', id: m.id, ok: false, message: (err as Error).message }),
    );
  });

  let stopping = false;
  let delay = 0;
  const fork = (): Worker => {
    const w = cluster.fork();
    const born = Date.now();
    live.add(w);
    // A send to a worker that has just exited (a change notice, a reply) fails with
    // EPIPE, emitted as 'error': without a listener that would end the primary (exit 1) mid-drain.
    w.on('error', (err) => logger.warn({ err, pid: w.process.pid }, 'a message to a worker was not delivered: it is exiting'));
    relays.set(
      w,
      new ChangeSender((change, sent) => {
        if (!w.isConnected()) return false;
        w.send({ sy: 'change', change } satisfies ToWorker, (err: Error | null) => sent(err === null || err === undefined));
        return true;
      }),
    );
    w.once('exit', (code, signal) => {
      live.delete(w);
      relays.delete(w);
      gatherer.retire(w);
      if (stopping) return;
      delay = Date.now() - born < YOUNG_MS ? Math.min(MAX_RESTART_DELAY_MS, Math.max(100, delay * 2)) : 0;
      logger.error({ pid: w.process.pid, code, signal, restartInMs: delay }, 'a worker died: its in-flight requests are lost; a new one starts');
      setTimeout(() => void (stopping || fork()), delay);
    });
    return w;
  };

  // Every worker listening, or the start fails as a single process's does: said, exit 1.
  const first = Array.from({ length: settings.workers }, fork);
  await Promise.all(
    first.map(
      (w) =>
        new Promise<void>((resolve, reject) => {
          w.once('listening', () => resolve());
          w.once('exit', (code) => reject(new Error(`a worker exited (code ${code}) before it listened`)));
        }),
    ),
  ).catch(async (err: unknown) => {
    stopping = true;
    for (const w of live) w.process.kill('SIGKILL');
    await logs.retention.stop();
    await logs.writer?.close();
    await store.close().catch(() => {});
    throw err;
  });
  logger.info({ workers: settings.workers }, 'switchyard primary: every worker listening');

  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: live.size }, 'draining every worker');
    const exited = [...live].map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    for (const w of live) w.process.kill('SIGTERM');
    const late = setTimeout(() => {
      for (const w of live) w.process.kill('SIGKILL');
    }, settings.shutdownGraceMs + CLOSE_MARGIN_MS);
    await Promise.all(exited);
    clearTimeout(late);
    // After the workers: their last log batches have arrived.
    await logs.retention.stop();
    await logs.writer?.close();
    await store.close();
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      stop(signal).then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
