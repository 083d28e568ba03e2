// The one workflow module the test run bundles: the plugin's workflows plus small workflows that exist only to
// test the platform (durable timers across worker restarts).
export * from '../../src/workflows';
export * from './test-workflows';
