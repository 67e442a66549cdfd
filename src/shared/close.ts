/**
 * Runs each close in turn, each one even after an earlier one failed (a log
 * writer that cannot flush must not leave the store or Redis open), then
 * throws what failed: the error itself when one did, an AggregateError when
 * several did.
 */
export async function closeInTurn(steps: ReadonlyArray<() => unknown>): Promise<void> {
  const failed: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      failed.push(err);
    }
  }
  if (failed.length === 1) throw failed[0];
  if (failed.length > 1) throw new AggregateError(failed, `${failed.length} closes failed`);
}
