/**
 * Loss while a bounded buffer of request logs is full: each dropped log is
 * counted by the caller (`dropped` in /metrics); this says it in the
 * process log once when dropping begins and once, with the number, when it
 * ends, rather than a line per log while thousands go.
 */
export class Shedding {
  private n = 0;

  constructor(
    private readonly say: (message: string) => void,
    /** Why logs are dropped, as a clause: "the log writer thread fell behind". */
    private readonly why: string,
  ) {}

  /** One log dropped. */
  drop(): void {
    if (this.n++ === 0) this.say(`request logs are being dropped (and counted): ${this.why}`);
  }

  /** A log was taken again (or the buffer closes): says how many were dropped, if any. */
  end(): void {
    if (this.n === 0) return;
    this.say(`${this.n} request logs were dropped: ${this.why}`);
    this.n = 0;
  }
}
