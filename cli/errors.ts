/**
 * A command that ran and found the user's input wrong (a file with bad rows, say): `flow` prints the
 * message, which says what to fix, and exits 1 without a stack trace. Usage mistakes are
 * UsageError (exit 2).
 */
export class CommandFailed extends Error {}
