/** An error whose message is meant for the user as it is: the CLI prints it as one line, exit 1. */
export class UserError extends Error {
  override name = 'UserError';
}
