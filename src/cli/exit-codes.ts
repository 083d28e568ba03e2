// The CLI's exit codes, in a module of their own: the entry point (index.ts) needs them before it loads any command.

/** Exit code of a command whose workflow (or the command itself) failed. */
export const FAILURE_EXIT_CODE = 1;
/** Exit code of a usage error (unknown option, missing argument, invalid option value). */
export const USAGE_EXIT_CODE = 2;
/**
 * Exit code when the CLI gave up following a workflow because Temporal stayed unreachable for the whole
 * `--reconnect-timeout`: the workflow may still be running (or have finished); `sapi-temporal wait <id>` re-attaches.
 */
export const LOST_CONTACT_EXIT_CODE = 3;
