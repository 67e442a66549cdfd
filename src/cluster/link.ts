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

/** Longer than any pause of a busy primary, short enough that a request does not hang on a dead one. */
export const CALL_TIMEOUT_MS = 2000;

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

  call(op: Call, args: unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.channel.connected !== true) return reject(new Error('the primary process is gone'));
      const id = (this.next = (this.next + 1) % Number.MAX_SAFE_INTEGER);
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the primary did not answer ${op} within ${CALL_TIMEOUT_MS} ms`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.send({ sy: 'call', id, op, args });
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
