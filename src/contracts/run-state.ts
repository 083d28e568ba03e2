// Internal run state in the plugin's workflow inputs: what only the plugin itself sets. Types and constants only: safe
// for workflow code, the Nexus handler and callers.

/**
 * Fields of a plugin workflow's input that only the plugin itself sets: `resume`, the state a run carries over its
 * own continue-as-new (an extraction's checkpoint with its staging key; an import's file, job and what it created; an
 * export's job), and `sourceGrant`, the worker's grant for a CSV an extraction staged (set by `extractWorkflow` on the
 * import it starts as a child). A caller never sends them: the Nexus handler refuses them, and the activities refuse
 * another run's objects whatever a workflow forwards (`SAPI_INPUT_FORBIDDEN`).
 */
export const INTERNAL_INPUT_FIELDS: readonly string[] = Object.freeze(['resume', 'sourceGrant']);
