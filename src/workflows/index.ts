// The plugin's workflows. A TypeScript worker bundles exactly one workflow module: re-export this one from yours
// (`export * from 'sapi-temporal/workflows'`) or point `workflowsPath` at `require.resolve('sapi-temporal/workflows')`.
export {};
