/**
 * Preloaded (--import) into the gateway under BENCH_PROFILE=1: --cpu-prof
 * writes its file only when the process exits by itself, and a signal's
 * default action would kill it first. The gateway's own handlers, if any,
 * still run; this one only makes sure an exit follows.
 */
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    setTimeout(() => process.exit(0), 1000);
  });
}
