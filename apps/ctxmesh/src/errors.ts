/**
 * Every error of the `ctxmesh` command and the one-process mesh, in one place (the catalogue
 * of `@ctxmesh/ctxmesh`).
 */

/** Error from the gateway, with its HTTP status and contract error code (the CLI's HTTP client). */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The URL or the server behind it is not a usable ctxmesh gateway; the message is one line naming the URL. */
export class GatewayUrlError extends Error {
  override readonly name = 'GatewayUrlError';
}

/** A command line the subcommand does not accept (the CLI exits 2 and prints the usage). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The search thread could not start (its error, or its exit before it was ready). */
export class SearchThreadError extends Error {
  override readonly name = 'SearchThreadError';
}
