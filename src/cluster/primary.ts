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
 * no others), after a delay that grows while its slot's workers keep dying
 * (restart-backoff.ts), so a worker that cannot start or serve does not
 * spin. SIGTERM or SIGINT, from the first moment (during the migrations
 * too), drains every worker (each finishes its in-flight requests within
 * the grace period), then the log writer flushes, the store closes and the
 * process exits.
 */
import cluster, { type Worker } from 'node:cluster';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { openReadyStore, requestLogs } from '../gateway.js';
import { Metrics } from '../metrics/metrics.js';
import type { Settings } from '../settings.js';
import { closeInTurn } from '../shared/close.js';
import { ChangeSender, isChange } from './change-relay.js';
import { LogIntake } from './log-intake.js';
import { MetricsGatherer } from './metrics-gather.js';
import { everyListening } from './listening.js';
import { isOurs, type ToPrimary, type ToWorker } from './messages.js';
import { PrimaryState } from './primary-state.js';
import { drainOnSignals } from './signals.js';
import { RestartBackoff } from './restart-backoff.js';

/** Past the grace period, what a worker's close still does (tracer, log batch, leases back) gets this long before SIGKILL. */
const CLOSE_MARGIN_MS = 15_000;
/** After SIGKILL, how long a worker's exit and the end of its channel may take to be seen. */
const KILLED_MS = 5_000;
/** After a worker's exit, how long what it sent last may take to be read from its channel. */
const CHANNEL_END_MS = 1_000;
/** As CHANNEL_END_MS, for a worker that exited as drained (code 0) with logs on: it sent `logs-end` after its last log batch. */
const LOGS_END_MS = 15_000;
/** How long the first workers may take to listen (a worker's store or Redis hung since the migrations) before the start fails. */
const START_LIMIT_MS = 60_000;

export async function runPrimary(settings: Settings, logger: Logger): Promise<void> {
  const live = new Set<Worker>();
  /** Workers that sent `logs-end`: every log batch they sent before it has been taken. */
  const logsEnded = new WeakSet<Worker>();
  /** What is open, closed by a shutdown last first (retention, the log writer, then the store). */
  const closers: Array<() => Promise<void>> = [];
  let stopped: Promise<void> | null = null;

  // The store as it opens (migrations), for a shutdown asked meanwhile to close once it is open.
  const opening = openReadyStore(settings, logger).then(({ store }) => {
    closers.push(() => store.close());
    return store;
  });

  const shutdown = async (why: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> => {
    logger.info({ signal: why, workers: live.size }, 'draining every worker');
    const limitMs = settings.shutdownGraceMs + CLOSE_MARGIN_MS;
    // Migrations are not cut short: they end (or fail), then what they opened is closed.
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([
      opening.catch(() => {}),
      new Promise((_, reject) => (waited = setTimeout(() => reject(new Error(`the store did not finish opening within ${limitMs} ms`)), limitMs))),
    ]).finally(() => clearTimeout(waited));
    // Both the exit and the end of what the worker sent: its last log batches may still be in the pipe when it has
    // exited. That end is its `logs-end` message (sent after its last batch) or the channel's end. Under load a worker's
    // exit was seen with no 'disconnect' ever after (about 1 run in 20 of test/shutdown.test.ts, a core kept busy), so
    // the wait is bounded after the exit: LOGS_END_MS for a drained worker whose logs-end is due (1 s lost batches
    // there under load), CHANNEL_END_MS for one that died or logs nothing.
    const gone = [...live].map((w) => {
      const exited = new Promise<number | null>((resolve) => (w.isDead() ? resolve(w.process.exitCode) : w.once('exit', (code) => resolve(code))));
      const ended = new Promise<void>((resolve) => {
        if (!w.isConnected() || logsEnded.has(w)) return resolve();
        w.once('disconnect', () => resolve());
        w.on('message', (m: unknown) => (isOurs<ToPrimary>(m) && m.sy === 'logs-end' ? resolve() : undefined));
      });
      const bound = exited.then((code) => sleep(code === 0 && settings.requestLogs ? LOGS_END_MS : CHANNEL_END_MS, undefined, { ref: false }));
      return Promise.all([exited, Promise.race([ended, bound])]);
    });
    for (const w of live) w.process.kill(signal);
    const late = setTimeout(() => {
      for (const w of live) w.process.kill('SIGKILL');
    }, limitMs);
    let given: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(gone), new Promise<void>((resolve) => (given = setTimeout(resolve, limitMs + KILLED_MS)))]);
    clearTimeout(late);
    clearTimeout(given);
    await closeInTurn(closers.reverse());
  };
  const stop = (why: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> => (stopped ??= shutdown(why, signal));

  // First of all: a SIGTERM during the migrations closes the store rather than ending the process with it open.
  drainOnSignals({ close: (why) => stop(why, 'SIGTERM') }, logger);

  const store = await opening;
  if (stopped !== null) return;

  // What the primary itself counts (the writer's records and usage, the shared state's evictions): part of every
  // scrape's sum, so it neither goes with a worker that dies nor is missing from /metrics.
  const metrics = new Metrics();
  const evicted = { rate: metrics.evicted('rate_counters'), budget: metrics.evicted('budget_counters'), circuit: metrics.evicted('circuits') };
  const state = settings.redisUrl === undefined ? new PrimaryState(settings, (kind, key) => evicted[kind](key)) : null;
  // Each worker's store changes, for every other worker (change-relay.ts).
  const relays = new Map<Worker, ChangeSender>();
  const logs = requestLogs(settings, store, logger, Date.now, (...row) => metrics.usage(...row));
  const writer = logs.writer;
  if (writer !== null) closers.push(() => writer.close());
  closers.push(() => logs.retention.stop());
  const intake = writer === null ? null : new LogIntake(writer, (message) => logger.warn(message));
  if (intake !== null) metrics.watchLogQueue(() => intake.stats());

  const gatherer = new MetricsGatherer(() => metrics.registry.getMetricsAsJSON());

  cluster.setupPrimary({ serialization: 'advanced' });
  cluster.on('message', (worker, m: unknown) => {
    if (!isOurs<ToPrimary>(m)) return;
    if (m.sy === 'logs') return intake?.take(m.batch);
    if (m.sy === 'logs-end') return void logsEnded.add(worker);
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

  const backoff = new RestartBackoff(settings.workers);
  const fork = (slot: number): Worker => {
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
      if (stopped !== null) return;
      const delay = backoff.next(slot, born, Date.now());
      logger.error({ pid: w.process.pid, code, signal, restartInMs: delay }, 'a worker died: its in-flight requests are lost; a new one starts');
      setTimeout(() => void (stopped === null && fork(slot)), delay);
    });
    return w;
  };

  // Every worker listening, or the start fails as a single process's does: said, exit 1.
  const first = Array.from({ length: settings.workers }, (_, slot) => fork(slot));
  try {
    await everyListening(first, START_LIMIT_MS);
  } catch (err) {
    // A signal stopped them: its handler exits once everything is closed.
    if (stopped !== null) return;
    // The start's failure is what is said; a close that fails too is not.
    await stop('a worker did not start', 'SIGKILL').catch(() => {});
    throw err;
  }
  logger.info({ workers: settings.workers }, 'switchyard primary: every worker listening');
}
