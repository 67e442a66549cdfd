/**
 * A cancellation token undici accepts as a request signal (it takes any
 * EventEmitter with an 'abort' event). Cheaper than AbortController, whose
 * signal and DOMException cost a measurable share of a proxied request.
 */
import { EventEmitter } from 'node:events';

export class Cancel extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }

  /** A child that aborts with this one or after `ms`; `release()` detaches it when the attempt is over. */
  withTimeout(ms: number): { cancel: Cancel; timedOut: () => boolean; release: () => void } {
    const child = new Cancel();
    let fired = false;
    const onParent = (): void => child.abort();
    const timer = setTimeout(() => {
      fired = true;
      child.abort();
    }, ms);
    if (this.aborted) child.abort();
    else this.once('abort', onParent);
    return {
      cancel: child,
      timedOut: () => fired,
      release: () => {
        clearTimeout(timer);
        this.off('abort', onParent);
      },
    };
  }

  /** Resolves true after `ms`, or false as soon as this is aborted. */
  sleep(ms: number): Promise<boolean> {
    if (this.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.off('abort', onAbort);
        resolve(true);
      }, ms);
      this.once('abort', onAbort);
    });
  }
}
