/** The command's exit codes (docs/cli.md) and the one way a command fails. */

export const EXIT = {
  ok: 0,
  /** The gateway refused the request (its error is printed), or the config is invalid. */
  refused: 1,
  /** Bad usage: an unknown command or option, a missing argument, a file that cannot be read. */
  usage: 2,
  /** No answer from the gateway: nothing listens at the URL, or it did not answer in time. */
  unreachable: 3,
} as const;

/** Ends the command with `code`, after `message` on stderr. */
export class CliError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const usage = (message: string): CliError => new CliError(EXIT.usage, message);
