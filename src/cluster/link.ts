/**
 * A worker's end of the IPC channel to its primary: calls that wait for an
 * answer (the shared state: worker-state.ts), each within CALL_TIMEOUT_MS,
 * and messages that need none (log batches). A call the primary does not
 * answer in time rejects, as a Redis command does when Redis is away: its
 * caller falls back (circuits), misses (cache), or decides by the policies'
 * fail_mode (limits).
 */
import type { Change } from '../store/changes.js';
import { isOurs, type Call, type ToPrimary, type ToWorker } from './messages.js';

/**
 * Redis's command timeout (state/redis.ts), so a stalled primary costs a
 * request what a stalled Redis does: a request makes several calls in a row
 * (lease, budget, circuit, cache), each of which may wait this long.
 */
export const CALL_TIMEOUT_MS = 500;
/** /metrics waits for the primary to gather every worker's series (metrics-gather.ts), not for one lookup. */
export const METRICS_CALL_TIMEOUT_MS = 2000;
/** Calls waiting for an answer, past which more are refused at once: a primary that stopped answering holds no more. */
export const MAX_PENDING_CALLS = 10_000;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class PrimaryLink {
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  /** Told of a store change another worker made (relayed by the primary). */
  onChange: (change: Change) => void = () => {};
  /** This worker's registry series, for the primary's sum of every worker's (metrics-gather.ts). */
  onGather: () => Promise<unknown> = async () => [];

  constructor(private readonly channel: NodeJS.Process = process) {
    channel.on('message', (m: unknown) => {
      if (!isOurs<ToWorker>(m)) return;
      if (m.sy === 'change') return this.onChange(m.change);
      if (m.sy === 'gather') {
        const id = m.id;
        return void this.onGather().then(
          (series) => this.send({ sy: 'gathered', id, series }),
          () => this.send({ sy: 'gathered', id, series: null }),
        );
      }
      const p = this.pending.get(m.id);
      if (p === undefined) return; // timed out already
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(`primary: ${m.message}`));
    });
    // The primary is gone: nothing will answer.
    channel.on('disconnect', () => {
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(new Error('the primary process is gone'));
      }
    });
  }

  call(op: Call, args: unknown[], timeoutMs = CALL_TIMEOUT_MS): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.channel.connected !== true) return reject(new Error('the primary process is gone'));
      if (this.pending.size >= MAX_PENDING_CALLS) return reject(new Error(`${MAX_PENDING_CALLS} calls to the primary wait for an answer already: ${op} refused`));
      const id = (this.next = (this.next + 1) % Number.MAX_SAFE_INTEGER);
      const fail = (message: string): void => {
        const p = this.pending.get(id);
        if (p === undefined) return;
        this.pending.delete(id);
        clearTimeout(p.timer);
        reject(new Error(message));
      };
      const timer = setTimeout(() => fail(`the primary did not answer ${op} within ${timeoutMs} ms`), timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      // A message that could not be handed to the channel gets no answer: say so now, not after the timeout.
      const handed = this.channel.send!({ sy: 'call', id, op, args } satisfies ToPrimary, undefined, {}, (err) => {
        if (err !== null && err !== undefined) fail(`${op} could not be sent to the primary: ${err.message}`);
      });
      if (!handed && this.channel.connected !== true) fail('the primary process is gone');
    });
  }

  connected(): boolean {
    return this.channel.connected === true;
  }

  /** Resolves once the message is handed to the channel (false: the primary is gone). */
  send(m: ToPrimary): Promise<boolean> {
    if (this.channel.connected !== true) return Promise.resolve(false);
    return new Promise((resolve) => this.channel.send!(m, undefined, {}, (err) => resolve(err === null || err === undefined)));
  }
}
